package temporal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// TestKilledBeforeItKeptTheChangeSaysSo (review17 R2): the worker is
// killed (SIGKILL) after its writer's child finished and before the
// attempt took the child's change from its copy; restarted on the same
// repository and home, it gets the call's next attempt, finds the task
// finished in its records and no change kept. It must not say, attempt
// after attempt, that the given-up attempt "has not taken its change yet"
// (that attempt is dead): the call fails at once, saying the change is
// lost and what to do.
func TestKilledBeforeItKeptTheChangeSaysSo(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	fifo := newFifo(t)
	w := startWorkerProcEnv(t, srv.Addr, q, heldScript, store, 1, writerSettings, "BROOD_TEST_HOLD_BEFORE_RESULT="+fifo)
	dir := submitterRepo(t)
	blobs, err := blobstore.Open(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	limits := testLimits
	limits.Attempts = 6
	eng := temporal.New(temporal.Config{Client: c, Queue: q, Poll: 50 * time.Millisecond,
		Limits: func(string) temporal.CallLimits { return limits },
		Code:   &temporal.CodeConfig{Blobs: blobs, Dir: dir, StateDir: t.TempDir()}})
	id := dispatch.NewID()
	done := make(chan callOut, 1)
	go func() {
		r, err := eng.Call(context.Background(), call.Spec{TaskID: id, Agent: "general-purpose", Prompt: "write held.txt", Description: "held"})
		done <- callOut{r, err}
	}()
	f := openToWrite(t, fifo, done) // the child finished; its attempt is held
	w.kill()
	f.Close()
	startWorkerProcOn(t, w.p, srv.Addr, q, store, 1, writerSettings)
	var o callOut
	select {
	case o = <-done:
	case <-time.After(4 * time.Minute):
		t.Fatal("the call did not end")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.r.Status == dispatch.StatusDone {
		if len(o.r.Code) == 0 {
			t.Fatalf("done without the child's change: %+v", o.r)
		}
		return // came back whole (a retry that continued from the transcript)
	}
	if !strings.Contains(o.r.Error, "the change is lost") || !strings.Contains(o.r.Error, "brood tasks resume "+id) || strings.Contains(o.r.Error, "has not taken its change") {
		t.Errorf("the call: %s, %q; want it to say the change is lost and what to do", o.r.Status, o.r.Error)
	}
	if d := pending(t, c, "brood-call-"+id); len(d) != 0 {
		t.Errorf("the call is still pending: %+v", d)
	}
}
