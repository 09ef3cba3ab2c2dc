package temporal_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	brt "github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestResumeStartingKeepsItsFollowUp: a resumed call's attempt whose child
// has written its start record but not yet its follow-up when its beats
// go out (a working store: they would upload that transcript) keeps
// naming the earlier run's transcript; the child killed then (the
// lifeguard: a retryable end), the retry sends the follow-up again
// instead of continuing the earlier run, whose answer it would return.
func TestResumeStartingKeepsItsFollowUp(t *testing.T) {
	wc, rpcs := countingClient(t, sharedServer(t).Addr)
	id := dispatch.NewID()
	var resumed call.Spec
	var earlier string // the earlier run's transcript's SHA-256
	var held brt.Heartbeat
	var ff *fakeFleet
	ff = newFakeFleet(t, wc, func(cctx context.Context, attempt int, f *fakeChild) *call.Result {
		switch {
		case f.spec.NextTurn == "" && f.spec.Resume == "" && f.spec.Transcript == "": // the first run
			f.answer(1)
			f.spec.Watch.Turn(cctx, 1)
			return result(f, dispatch.StatusDone, "the first run's answer")
		case attempt == 1: // the resume, starting
			sum := sha256.Sum256(brt.TranscriptObject(id, f.data)) // the seed: the earlier run's, as the store keeps it
			earlier = hex.EncodeToString(sum[:])
			f.start()
			// Two beats after the start record: each uploads what grew.
			for n := rpcs.get("RecordActivityTaskHeartbeat") + 2; rpcs.get("RecordActivityTaskHeartbeat") < n && cctx.Err() == nil; {
				f.spec.Watch.Alive()
				select {
				case <-cctx.Done():
				case <-time.After(50 * time.Millisecond):
				}
			}
			held = ff.details(t, f.spec.TaskID)
			r := result(f, dispatch.StatusKilled, "")
			r.Process = &dispatch.Output{KilledBy: pool.KilledByLifeguard}
			return r
		}
		resumed = f.spec
		return result(f, dispatch.StatusDone, "answered the follow-up")
	})
	first := ff.call(t, context.Background(), id)
	if first.err != nil || first.r.Summary != "the first run's answer" {
		t.Fatalf("first run: %+v, %v", first.r, first.err)
	}
	o := ff.run(t, context.Background(), call.Spec{Resume: id, Prompt: "one more thing"})
	if o.err != nil || o.r.Summary != "answered the follow-up" {
		t.Fatalf("resumed call: %+v, %v; want the follow-up answered", o.r, o.err)
	}
	if held.Transcript.SHA256 != earlier {
		t.Errorf("the starting attempt's beats named %+v; want the earlier run's transcript (sha256 %s)", held.Transcript, earlier)
	}
	if resumed.NextTurn != "one more thing" {
		t.Errorf("the retry continued with next turn %q; want the follow-up", resumed.NextTurn)
	}
}

// TestRetryOfAResumeSendsItsFollowUp: a retry of a resumed call (brood
// tasks resume ID "PROMPT") whose details still name the transcript the
// call started from (in.From: its attempt died before it uploaded one with
// the follow-up in it) sends the follow-up again; one whose details name
// a transcript of its own (the follow-up is in it) continues it.
func TestRetryOfAResumeSendsItsFollowUp(t *testing.T) {
	store := &brt.DirStore{Dir: t.TempDir()}
	id := dispatch.NewID()
	earlier, _ := store.PutBytes(context.Background(), brt.TranscriptObject(id, []byte(`{"type":"message"}`+"\n")))
	own, _ := store.PutBytes(context.Background(), brt.TranscriptObject(id, []byte(`{"type":"message"}`+"\n"+`{"type":"message","turn":1}`+"\n")))
	from := brt.Heartbeat{TaskID: id, Worker: "first", Transcript: earlier, Position: earlier.Size - int64(len(brt.TranscriptObject(id, nil)))}
	cases := []struct {
		name    string
		details brt.Heartbeat
		next    string
	}{
		{"the earlier run's transcript", brt.Heartbeat{TaskID: id, Worker: "dead", Transcript: earlier, Position: earlier.Size - int64(len(brt.TranscriptObject(id, nil)))}, "one more thing"},
		{"a transcript with the follow-up", brt.Heartbeat{TaskID: id, Worker: "dead", Transcript: own, Position: own.Size - int64(len(brt.TranscriptObject(id, nil)))}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var seen call.Spec
			a := &brt.Activities{Store: store, ProjectRoot: t.TempDir(), Runner: runnerFunc(func(_ context.Context, s call.Spec) (*call.Result, error) {
				seen = s
				return &call.Result{TaskID: s.TaskID, Status: dispatch.StatusDone}, nil
			})}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			env.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: brt.CallActivityName})
			env.SetHeartbeatDetails(tc.details)
			if _, err := env.ExecuteActivity(brt.CallActivityName, brt.CallInput{Spec: call.Spec{Resume: id, Prompt: "one more thing"}, From: &from}); err != nil {
				t.Fatal(err)
			}
			if seen.TaskID != id || seen.NextTurn != tc.next {
				t.Errorf("spec of task %q with next turn %q; want task %s with %q", seen.TaskID, seen.NextTurn, id, tc.next)
			}
		})
	}
}

// TestResumedCallKeepsItsFollowUp: `brood tasks resume ID "PROMPT"` of a
// finished fleet call, whose resumed attempt's worker is killed while the
// follow-up's request is in flight and before its transcript reached the
// store (the store refuses puts meanwhile), so that its heartbeats still
// name the earlier run's transcript. The retry on the other worker still
// sends the follow-up: the model is asked its turn again and the call
// returns its answer, never the earlier run's answer again.
func TestResumedCallKeepsItsFollowUp(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	dir := t.TempDir()
	store := "file://" + dir
	m := newTurnModel(t, 0)
	const desc = "follow-up kept"
	workers := []*workerProc{
		startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", m.env()...),
		startWorkerProcEnv(t, srv.Addr, q, "agents: {}\n", store, 1, "", m.env()...),
	}
	eng := newEngine(c, q)
	id := dispatch.NewID()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	first, err := eng.Call(ctx, call.Spec{TaskID: id, Agent: "explore", Prompt: "count the files", Description: desc})
	if err != nil || first.Status != dispatch.StatusDone || first.Summary != "finished after 0 tool turns" {
		t.Fatalf("first run: %+v, %v", first, err)
	}
	// The store refuses puts: its staging directory is a file.
	tmp := filepath.Join(dir, ".tmp")
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	k := turnKey{desc, 1}
	m.hold(k)
	m.answerText(k, "answered the follow-up")
	done := make(chan callOut, 1)
	go func() {
		r, err := eng.Call(ctx, call.Spec{Resume: id, Prompt: "and one more thing"})
		done <- callOut{r, err}
	}()
	select {
	case <-m.arrivedAt(k):
	case o := <-done:
		t.Fatalf("the resume ended before its follow-up was asked: %+v, %v", o.r, o.err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the follow-up was never asked")
	}
	// The resumed attempt's own beats reached the server, naming the
	// earlier run's transcript (its uploads failed): a retry gets them.
	var victim *workerProc
	waitFor(t, "a heartbeat of the resumed attempt", time.Minute, func() bool {
		for _, pc := range pending(t, c, "brood-call-"+id) {
			for _, w := range workers {
				if pc.HB.TaskID == id && w.owns(pc.Worker) {
					victim = w
					return true
				}
			}
		}
		return false
	})
	victim.kill()
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tmp, 0o750); err != nil {
		t.Fatal(err)
	}
	m.release(k)
	var o callOut
	select {
	case o = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the resumed call did not finish after its worker was killed")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.r.TaskID != id || o.r.Status != dispatch.StatusDone || o.r.Summary != "answered the follow-up" {
		t.Fatalf("resumed call %+v; want task %s done with the follow-up's answer", o.r, id)
	}
	if n, n0 := m.askedN(k), m.askedN(turnKey{desc, 0}); n != 2 || n0 != 1 {
		t.Errorf("the follow-up's turn asked %d time(s), the first turn %d; want 2 (the killed attempt's request and the retry's) and 1", n, n0)
	}
}

// TestLegacyResumeRetrySendsItsFollowUpOnce: a resume (brood tasks resume
// ID "PROMPT") whose input carries no From (a task with no call workflow
// on the fleet, a submitter from before From) continues the task from the
// worker's own records. Its first attempt appends the follow-up to the
// task's transcript there and dies before a transcript with it reached
// the store (puts fail; the lifeguard kills the child: a retryable end),
// so its heartbeats name none. The retry, on the same worker, starts from
// the transcript as it was before the follow-up and sends it once, never
// after the first attempt's copy of it.
func TestLegacyResumeRetrySendsItsFollowUpOnce(t *testing.T) {
	id := dispatch.NewID()
	const followUp = "one more thing"
	var before, retried []byte // the task's transcript before the resume, and as the retry found it
	var retrySpec call.Spec
	var ff *fakeFleet
	ff = newFakeFleet(t, nil, func(cctx context.Context, attempt int, f *fakeChild) *call.Result {
		if f.spec.Resume == "" { // the first run: the task's records on this worker
			if err := f.td.WriteFile(taskdir.Envelope, []byte(`{"task_id":"`+f.spec.TaskID+`"}`), true); err != nil {
				t.Error(err)
			}
			f.answer(1)
			f.spec.Watch.Turn(cctx, 1)
			before = append([]byte(nil), f.data...)
			return result(f, dispatch.StatusDone, "the first run's answer")
		}
		data, err := f.td.ReadFile(taskdir.Session, 0)
		if err != nil {
			t.Error(err)
		}
		f.data = data
		if attempt > 1 {
			retried, retrySpec = data, f.spec
			ff.store.fail(0)
			f.start()
			f.ask(f.spec.Prompt)
			f.answer(2)
			return result(f, dispatch.StatusDone, "answered the follow-up")
		}
		// The resume's first attempt: the follow-up in the transcript,
		// none of it in the store; then the lifeguard.
		f.start()
		f.ask(f.spec.Prompt)
		r := result(f, dispatch.StatusKilled, "")
		r.Process = &dispatch.Output{KilledBy: pool.KilledByLifeguard}
		return r
	})
	if o := ff.call(t, context.Background(), id); o.err != nil || o.r.Summary != "the first run's answer" {
		t.Fatalf("first run: %+v, %v", o.r, o.err)
	}
	ff.store.fail(-1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	in := brt.CallInputW{Spec: call.Spec{Resume: id, Agent: "explore", Prompt: followUp}, Limits: testLimits, Queue: ff.queue}
	run, err := ff.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "brood-call-" + id, TaskQueue: ff.queue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE}, brt.CallWorkflowName, in)
	if err != nil {
		t.Fatal(err)
	}
	var out brt.CallOutput
	if err := run.Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if out.Status != dispatch.StatusDone || out.Summary != "answered the follow-up" || retried == nil {
		t.Fatalf("resumed call: %s %q; want done with the follow-up's answer after a retry", out.Status, out.Summary)
	}
	if retrySpec.Resume != id || retrySpec.Continue || retrySpec.Prompt != followUp {
		t.Errorf("the retry ran resume %q, continue %v, prompt %q; want task %s resumed with the follow-up", retrySpec.Resume, retrySpec.Continue, retrySpec.Prompt, id)
	}
	if string(retried) != string(before) {
		t.Errorf("the retry started from a transcript of %d bytes (%d user message(s) %q); want the %d bytes from before the resume",
			len(retried), strings.Count(string(retried), `"text":"`+followUp+`"`), followUp, len(before))
	}
}
