package pool

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox/sandboxtest"
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

// uniqueSleep and procsWith are sandboxtest's (UniqueSleep, LiveWith).
func uniqueSleep() string        { return sandboxtest.UniqueSleep() }
func procsWith(arg string) []int { return sandboxtest.LiveWith(arg) }

// testJob is a Job as the tests run it: Start, the lines read, Wait, and
// output.json written where a caller would.
type testJob struct {
	Job
	OutputPath string
	OnStart    func(pid int)
	OnLine     func(line []byte)
	lines      *[]string
}

// run starts the job, gathers its event lines (heartbeats left out) and
// waits for its end.
func (j testJob) run(ctx context.Context, p *Pool) (*dispatch.Output, error) {
	h, err := p.Start(ctx, j.Job)
	if err != nil {
		return nil, err
	}
	if j.OnStart != nil {
		j.OnStart(h.PID())
	}
	for l := range h.Lines() {
		if l.Ping {
			continue
		}
		*j.lines = append(*j.lines, string(l.Text))
		if j.OnLine != nil {
			j.OnLine(l.Text)
		}
	}
	out := h.Wait()
	if j.OutputPath != "" {
		if err := dispatch.WriteJSONQuick(j.OutputPath, out); err != nil {
			return out, err
		}
	}
	return out, nil
}
