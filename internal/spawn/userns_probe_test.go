package spawn

import (
	"context"
	"errors"
	"os"
	"runtime"
	"syscall"
	"testing"
)

// TestProbeSettlesOnlyOnTheKernelsNo: a probe that fails otherwise than
// by the kernel refusing a user namespace (a fork short of a process slot
// under load) settles nothing and answers yes, so a worktree writer is
// still held in its mount namespace and a later probe can answer; the
// kernel's EPERM settles "no"; a success settles "yes".
func TestProbeSettlesOnlyOnTheKernelsNo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("user namespaces are Linux's")
	}
	forkErr := func(errno syscall.Errno) error {
		return &os.PathError{Op: "fork/exec", Path: "/proc/self/exe", Err: errno}
	}
	for _, tc := range []struct {
		name            string
		first           error
		settled, answer bool
	}{
		{"a fork short of a slot", forkErr(syscall.EAGAIN), false, true},
		{"the probe program failing", errors.New("exit status 1"), false, true},
		{"the kernel refusing", forkErr(syscall.EPERM), true, false},
		{"a namespace made", nil, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			a := &nsAnswer{try: func(context.Context) error {
				calls++
				if calls == 1 {
					return tc.first
				}
				return nil
			}}
			if got := a.settle(t.Context()); got != tc.answer {
				t.Errorf("settle = %v, want %v", got, tc.answer)
			}
			if a.settled != tc.settled {
				t.Errorf("settled = %v, want %v", a.settled, tc.settled)
			}
			if !tc.settled {
				// The next ask probes again, and a success settles yes.
				if !a.settle(t.Context()) || !a.settled || !a.works || calls != 2 {
					t.Errorf("after a probe that was no answer, the next did not settle yes (calls %d)", calls)
				}
			}
		})
	}
}
