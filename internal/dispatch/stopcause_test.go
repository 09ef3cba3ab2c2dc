package dispatch

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// TestStopCause: what stopped a context, in the user's words, from its
// recorded cause (a real SIGINT through signal.NotifyContext, a deadline,
// a plain cancel), never Go's "context canceled".
func TestStopCause(t *testing.T) {
	sigint, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-sigint.Done()
	sigquit, stopQ := signal.NotifyContext(context.Background(), syscall.SIGQUIT)
	defer stopQ()
	if err := syscall.Kill(os.Getpid(), syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	<-sigquit.Done()
	deadline, cancelD := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancelD()
	<-deadline.Done()
	plain, cancelP := context.WithCancel(context.Background())
	cancelP()
	own, cancelO := context.WithCancelCause(context.Background())
	cancelO(errors.New("the parent process exited"))
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		inChild bool
		want    string
	}{
		{"running", context.Background(), false, ""},
		{"ctrl-c", sigint, false, "stopped: the run was interrupted (Ctrl-C)"},
		{"ctrl-c under a child", context.WithoutCancel(sigint), false, ""},
		{"ctrl-\\", sigquit, false, "stopped: the run was quit (SIGQUIT)"},
		{"deadline", deadline, false, "stopped: its time limit"},
		{"plain cancel", plain, false, "stopped: the run it belongs to ended before it finished"},
		{"own cause", own, true, "stopped: the parent process exited"},
	} {
		if got := StopCause(tc.ctx, tc.inChild); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
