package temporal_test

import (
	"context"
	"os"
	"slices"
	"syscall"
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
// again, on the same worker (its only one, two slots); the server's last
// heartbeat names no change (the test records it, as when the attempt's
// beats with the change were refused). That attempt finds
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
	// The server's last heartbeat of the call predates the child's write,
	// as when the attempt's beats were refused while its child went on
	// (a loaded worker): a later attempt's copy cannot have the change.
	d, err := c.DescribeWorkflowExecution(context.Background(), "brood-call-"+id, "")
	if err != nil || len(d.GetPendingActivities()) != 1 {
		t.Fatalf("the held call's activity: %v", err)
	}
	act := d.GetPendingActivities()[0]
	if err := c.RecordActivityHeartbeatByID(context.Background(), "default", "brood-call-"+id, "", act.GetActivityId(),
		temporal.Heartbeat{TaskID: id, Worker: act.GetLastWorkerIdentity()}); err != nil {
		t.Fatal(err)
	}
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
	letThrough(t, fifo) // a later attempt that ran to its end is not held
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

// letThrough lets every later hold on fifo through at once, until the
// test ends.
func letThrough(t *testing.T, fifo string) {
	stop := make(chan struct{})
	go func() {
		for {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // until a hold opens it
			if err != nil {
				return
			}
			f.Close()
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
	})
}
