package pool

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
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

// uniqueSleep is a sleep duration no other process on the machine uses, so
// that a test can find its own sleeper in /proc by its command line.
func uniqueSleep() string {
	return fmt.Sprintf("150.%d%d", os.Getpid(), time.Now().UnixNano()%1e9)
}

// procsWith lists the live (non-zombie) processes whose command line holds
// arg.
func procsWith(arg string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(b), arg) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
			continue
		}
		out = append(out, pid)
	}
	return out
}
