package spawn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
)

// TestPickUpOfARunningTaskIsBusy: picking up a task (Continue) whose child
// another process still runs, past the wait for it to settle, is the
// task's being busy (dispatch.ErrTaskBusy), which a fleet worker retries,
// not a failure: the tester's worker stopped with SIGSTOP past its
// heartbeat timeout had its call fail for good when the retry found the
// stopped child still holding the task.
func TestPickUpOfARunningTaskIsBusy(t *testing.T) {
	p := newProject(t, "agents:\n  explore:\n    - say: \"slow answer\"\n      delay: \"60s\"\n", nil)
	events := make(chan spawn.Event, 64)
	first := p.dispatcher(p.settings(nil), 1, events)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = first.Call(ctx, call.Spec{Agent: "explore", Prompt: "take your time"})
	}()
	var id string
	for id == "" {
		select {
		case e := <-events:
			if e.Type == protocol.EvDispatchStart {
				id = e.TaskID
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("the first call never started")
		}
	}
	waitUntil(t, time.Minute, func() bool {
		tk, err := dispatch.LoadTask(p.root, id)
		return err == nil && tk.Status == dispatch.StatusRunning
	})
	second := p.dispatcher(p.settings(func(s *settings.Settings) { s.Pool.KillGrace = settings.Duration{Duration: 50 * time.Millisecond} }), 1, nil)
	_, err := second.Call(context.Background(), call.Spec{Agent: "explore", Resume: id, Continue: true, Prompt: "take your time"})
	if !errors.Is(err, dispatch.ErrTaskBusy) {
		t.Errorf("picking up a task another process runs: %v, want it busy (dispatch.ErrTaskBusy)", err)
	}
	cancel()
	<-done
}
