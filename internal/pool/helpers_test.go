package pool

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// waitGone polls /proc until pid is gone or a zombie, failing after 10s.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("process %d still alive", pid)
}

func itoa(n int) string {
	b := []byte{}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func runtimeGosched() { runtime.Gosched() }
