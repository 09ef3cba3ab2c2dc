package temporal_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
)

const heldScript = `
agents:
  general-purpose:
    - tools:
        - Write: {file_path: "held.txt", content: "written by the held attempt's child\n"}
    - say: "## What I did\nWrote held.txt.\n\n## Files changed\nheld.txt"
`

// TestGivenUpAttemptsChangeComesBack (issue 26, a tester's P1-3): the
// worker is held after its writer's child finished and before the attempt
// took its change (BROOD_TEST_HOLD_BEFORE_RESULT), past the heartbeat
// timeout, so the server gives the attempt up and schedules the call
// again, on the same worker (its only one, two slots). That attempt finds
// the task's records finished: it must not come back done without the
// child's change (it did, files_changed []): it is tried again until the
// held attempt, let go, has kept the change, and returns it.
func TestGivenUpAttemptsChangeComesBack(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	fifo := newFifo(t)
	startWorkerProcEnv(t, srv.Addr, q, heldScript, store, 2, writerSettings, "BROOD_TEST_HOLD_BEFORE_RESULT="+fifo)
	dir := submitterRepo(t)
	blobs, err := blobstore.Open(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	limits := testLimits
	limits.Attempts = 8
	eng := temporal.New(temporal.Config{Client: c, Queue: q, Poll: 50 * time.Millisecond,
		Limits: func(string) temporal.CallLimits { return limits },
		Code:   &temporal.CodeConfig{Blobs: blobs, Dir: dir, StateDir: t.TempDir()}})
	id := dispatch.NewID()
	done := make(chan callOut, 1)
	go func() {
		r, err := eng.Call(context.Background(), call.Spec{TaskID: id, Agent: "general-purpose", Prompt: "write held.txt", Description: "held"})
		done <- callOut{r, err}
	}()
	w := openToWrite(t, fifo, done) // the child finished; its attempt is held
	// Held until a later attempt found the task finished and failed, or
	// (without the fix) came back with the result.
	waitFor(t, "a later attempt of the held call", 2*time.Minute, func() bool {
		if len(done) > 0 {
			return true
		}
		for _, pc := range pending(t, c, "brood-call-"+id) {
			if pc.Attempt >= 3 {
				return true
			}
		}
		return false
	})
	w.Close()
	var o callOut
	select {
	case o = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the call did not finish after its attempt was let go")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.r.Status != dispatch.StatusDone || len(o.r.Code) == 0 || !slices.Equal(o.r.FilesChanged, []string{"held.txt"}) {
		t.Fatalf("result: status %s, files %v, change %d bytes; want done with held.txt", o.r.Status, o.r.FilesChanged, len(o.r.Code))
	}
	if got := read(t, dir, "held.txt"); got != "written by the held attempt's child\n" {
		t.Fatalf("held.txt is %q", got)
	}
}
