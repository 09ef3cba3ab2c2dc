package pool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// containModes are the modes a test runs in: the cgroup where this machine
// (and user) can have one, and the PID-namespace fallback, forced.
func containModes(t *testing.T) []string {
	t.Helper()
	return []string{"auto", ContainPIDNS}
}

// TestEscapedGrandchild is issue 10 case 3 at the pool: a grandchild that
// left the child's session with setsid and holds the child's stdout must
// neither keep Run waiting nor outlive the child.
func TestEscapedGrandchild(t *testing.T) {
	for _, mode := range containModes(t) {
		for _, hang := range []bool{false, true} {
			name := mode
			if hang {
				name += "/hard-timeout"
			}
			t.Run(name, func(t *testing.T) {
				dur := uniqueSleep()
				env := []string{"POOL_SLEEP=" + dur}
				if hang {
					env = append(env, "POOL_HANG=1")
				}
				p := New(Config{KillGrace: 300 * time.Millisecond, HeartbeatTimeout: time.Hour, Containment: mode})
				got, note := p.Containment(context.Background())
				j, lines := job(t, "escape", env...)
				if hang {
					j.Timeout = 200 * time.Millisecond
				}
				done := make(chan struct{})
				var err error
				go func() {
					defer close(done)
					_, err = j.run(context.Background(), p)
				}()
				select {
				case <-done:
				case <-time.After(60 * time.Second):
					t.Fatalf("Run still waiting a minute after the child ended (containment %s %s)", got, note)
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(*lines) == 0 || !strings.Contains((*lines)[0], "escaped") {
					t.Fatalf("lines %q", *lines)
				}
				if got == ContainNone {
					t.Logf("no containment on this machine (%s): only the parent's return is checked", note)
					return
				}
				if mode == ContainPIDNS && got != ContainPIDNS {
					t.Fatalf("asked for the PID-namespace fallback, got %s (%s)", got, note)
				}
				left := procsWith(dur)
				for _, pid := range left {
					waitGone(t, pid)
				}
			})
		}
	}
}

// TestCgroupRemoved checks that a child's cgroup is gone once Run returns.
func TestCgroupRemoved(t *testing.T) {
	p := New(Config{})
	c := p.containment(context.Background())
	if c.mode != ContainCgroup {
		t.Skipf("no writable cgroup v2 for this user (%s); TestEscapedGrandchild covers the fallback", c.note)
	}
	j, _ := job(t, "grandchild", "POOL_SLEEP="+uniqueSleep())
	var dir string
	j.OnStart = func(pid int) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		dir = strings.TrimSpace(string(b))
	}
	if _, err := j.run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("job-%d-1", os.Getpid())
	if !strings.HasSuffix(dir, "/"+want) {
		t.Fatalf("child's cgroup line %q does not end in /%s", dir, want)
	}
	if _, err := os.Stat(filepath.Join(c.base, want)); !os.IsNotExist(err) {
		t.Errorf("cgroup %s still there after Run: %v", want, err)
	}
}
