package temporal_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// readCounted is the fleet's store, counting reads by key.
type readCounted struct {
	*blobstore.Store
	mu    sync.Mutex
	reads map[string]int
}

func (r *readCounted) ReadAll(ctx context.Context, ref temporal.Ref) ([]byte, error) {
	r.mu.Lock()
	r.reads[ref.Key]++
	r.mu.Unlock()
	return r.Store.ReadAll(ctx, ref)
}

func (r *readCounted) count(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads[key]
}

// addressOf is the store's reference to data at its content address.
func addressOf(data []byte) temporal.Ref {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	return temporal.Ref{Key: "sha256/" + h[:2] + "/" + h, Size: int64(len(data)), SHA256: h}
}

// startTrustingWorker is startWorker with an allowlist: it runs only what
// trust's keys signed, as `brood worker --trusted-key` does.
func startTrustingWorker(t *testing.T, c client.Client, queue, script string, conc int, store temporal.Store, trust *temporal.Trust) *project {
	t.Helper()
	p := newProject(t, script)
	w := temporal.NewWorker(c, temporal.WorkerOptions{
		Queue: queue, Concurrency: conc, Heartbeat: 200 * time.Millisecond, StopTimeout: 5 * time.Second,
		Activities: &temporal.Activities{Runner: p.dispatcher(t, conc), ProjectRoot: p.root, Store: store, Trust: trust,
			Worker: "test-" + filepath.Base(p.root), UploadEvery: 100 * time.Millisecond},
	})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return p
}

// ran is how many tasks the worker's project holds.
func (p *project) ran() int {
	ents, _ := os.ReadDir(filepath.Join(p.root, ".brood", "dispatch"))
	return len(ents)
}

// callInputs is what a run's history says of its agent activities' inputs.
type callInputs struct {
	n, max int
	// inline: a call carried the signed payload; ref: the reference one
	// carried.
	inline bool
	ref    *temporal.Ref
	// attempt is the last started attempt of the run's last call.
	attempt int
}

// inputsOf reads the history of workflow id: every ActivityTaskScheduled
// of the agent activity, its input's size as the history holds it.
func inputsOf(t *testing.T, c client.Client, id string) callInputs {
	t.Helper()
	var out callInputs
	it := c.GetWorkflowHistory(t.Context(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil {
			out.attempt = int(a.GetAttempt())
		}
		a := e.GetActivityTaskScheduledEventAttributes()
		if a == nil || a.GetActivityType().GetName() != temporal.CallActivityName {
			continue
		}
		out.n++
		out.max = max(out.max, proto.Size(a.GetInput()))
		var in temporal.CallInput
		if err := converterFromPayload(a.GetInput().GetPayloads()[0], &in); err != nil {
			t.Fatal(err)
		}
		if in.Signed == nil {
			t.Fatalf("a call of run %s carries no signed submission", id)
		}
		out.inline = out.inline || in.Signed.Payload != nil
		out.ref = in.Signed.Ref
	}
	return out
}

// TestSignedPlanCallInputsStaySmall is issue 26's history bound: a signed
// plan of 300 items runs on a worker with an allowlist, and each call's
// input in the history carries a reference to the signed submission, not
// the submission: under 2 KB, and no larger than for 50 items but for the
// item's own text. The worker reads and checks the submission at most once
// per slot, not once per call. A submitter without a store still signs
// inline, and that runs too.
func TestSignedPlanCallInputsStaySmall(t *testing.T) {
	c := sharedServer(t).Client(t)
	q := newQueue(t)
	blobs, err := blobstore.Open(t.Context(), "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key, pub := newKey(t)
	trust := temporal.NewTrust()
	if err := trust.Add(pub, "test"); err != nil {
		t.Fatal(err)
	}
	const conc = 4
	counted := &readCounted{Store: blobs, reads: map[string]int{}}
	startTrustingWorker(t, c, q, fleetScript(0), conc, counted, trust)
	submitter := func(store temporal.Store) *temporal.Engine {
		return temporal.New(temporal.Config{Client: c, Queue: q, Poll: 50 * time.Millisecond, Signer: key, Store: store,
			Limits: func(string) temporal.CallLimits { return testLimits }})
	}
	size := map[int]int{}
	for _, k := range []int{50, 300} {
		p, in := eachPlan(t, k, conc)
		_, id := timedRunID(t, submitter(blobs), p, in, k)
		got := inputsOf(t, c, id)
		switch {
		case got.n != k:
			t.Fatalf("%d items: %d calls in the history", k, got.n)
		case got.inline || got.ref == nil:
			t.Fatalf("%d items: a call carries the signed submission inline", k)
		case got.max >= 2048:
			t.Fatalf("%d items: a call's input is %d bytes in the history; want under 2 KB whatever the plan", k, got.max)
		}
		if n := counted.count(got.ref.Key); n < 1 || n > conc {
			t.Fatalf("%d items: the worker read the signed submission %d times for %d calls; want once per slot at most (%d)", k, n, k, conc)
		}
		size[k] = got.max
		t.Logf("%d items: a call's input is %d bytes at most; the signed submission in the store %d bytes", k, got.max, got.ref.Size)
	}
	// "item-299" against "item-49": one more byte of the item itself.
	if size[300] > size[50]+8 {
		t.Fatalf("a call's input grew from %d bytes (50 items) to %d (300 items): it carries the plan", size[50], size[300])
	}
	p, in := eachPlan(t, 50, conc)
	_, id := timedRunID(t, submitter(nil), p, in, 50)
	got := inputsOf(t, c, id)
	if !got.inline || got.max <= size[50] {
		t.Fatalf("without a store: inline %v, a call's input %d bytes (by reference %d); want the payload inline", got.inline, got.max, size[50])
	}
	t.Logf("50 items without a store (inline): a call's input is %d bytes at most", got.max)
}

// TestSignedSubmissionByRefOnTheFleet: a single call signed by a trusted
// key, its submission in the store and only the reference in the
// workflow's input, on a real dev server and a worker with an allowlist.
// It runs; its payload changed in the store after it was put there (to
// another signed brief), or its signature forged with the reference left
// good, is refused at once (one attempt) and runs nothing; a payload not
// yet in the store is retried until it is, then runs.
func TestSignedSubmissionByRefOnTheFleet(t *testing.T) {
	c := sharedServer(t).Client(t)
	q := newQueue(t)
	dir := t.TempDir()
	blobs, err := blobstore.Open(t.Context(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	key, pub := newKey(t)
	trust := temporal.NewTrust()
	if err := trust.Add(pub, "test"); err != nil {
		t.Fatal(err)
	}
	w := startTrustingWorker(t, c, q, fleetScript(0), 1, blobs, trust)
	limits := testLimits
	limits.Attempts = 6
	sign := func(t *testing.T, wid, id, prompt string) (temporal.CallInputW, *temporal.Signed) {
		in := temporal.CallInputW{Spec: call.Spec{Agent: "explore", Prompt: prompt, TaskID: id}, Queue: q, Limits: limits}
		s, err := key.Sign(temporal.Submission{Kind: "call", Workflow: wid, Queue: q, Spec: &in.Spec,
			Limits: map[string]temporal.CallLimits{"": limits}, At: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		ref := addressOf(s.Payload)
		in.Signed = &temporal.Signed{Ref: &ref, RefSig: key.SignRef(ref), Key: s.Key, Sig: s.Sig}
		return in, s
	}
	put := func(t *testing.T, s *temporal.Signed) {
		if _, err := blobs.PutBytes(t.Context(), s.Payload); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		// prepare stores (or not) and changes the submission before it
		// starts; during runs while it waits.
		prepare func(t *testing.T, in *temporal.CallInputW, s *temporal.Signed)
		during  func(t *testing.T, wid string, s *temporal.Signed)
		want    string // "" done
		attempt int    // at least, when done; exactly 1 when refused
	}{
		{"by reference", func(t *testing.T, _ *temporal.CallInputW, s *temporal.Signed) { put(t, s) }, nil, "", 1},
		{"changed in the store", func(t *testing.T, in *temporal.CallInputW, s *temporal.Signed) {
			put(t, s)
			other := strings.Replace(string(s.Payload), "answer yes", "answer no!", 1)
			overwrite(t, dir, in.Signed.Ref.Key, []byte(other))
		}, nil, "does not match its reference: it was changed in the store", 1},
		{"forged signature", func(t *testing.T, in *temporal.CallInputW, s *temporal.Signed) {
			put(t, s)
			in.Signed.Sig = append([]byte(nil), s.Sig...)
			in.Signed.Sig[7] ^= 1
		}, nil, "changed after it was signed", 1},
		{"put after the first attempt", func(*testing.T, *temporal.CallInputW, *temporal.Signed) {}, func(t *testing.T, wid string, s *temporal.Signed) {
			waitFor(t, "the first attempt to fail on the missing payload", time.Minute, func() bool {
				d, err := c.DescribeWorkflowExecution(t.Context(), wid, "")
				if err != nil {
					return false
				}
				for _, a := range d.GetPendingActivities() {
					if strings.Contains(a.GetLastFailure().GetMessage(), "is not in the fleet store") {
						return true
					}
				}
				return false
			})
			put(t, s)
		}, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := dispatch.NewID()
			wid := "brood-call-" + id
			in, s := sign(t, wid, id, "answer yes")
			tc.prepare(t, &in, s)
			before := w.ran()
			r, err := c.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{ID: wid, TaskQueue: q}, temporal.CallWorkflowName, in)
			if err != nil {
				t.Fatal(err)
			}
			if tc.during != nil {
				tc.during(t, wid, s)
			}
			var out temporal.CallOutput
			err = r.Get(t.Context(), &out)
			got := inputsOf(t, c, wid)
			switch {
			case tc.want == "" && (err != nil || out.Status != dispatch.StatusDone):
				t.Fatalf("by reference: %v, %+v; want done", err, out.Result)
			case tc.want == "" && got.attempt < tc.attempt:
				t.Fatalf("done on attempt %d, want %d at least", got.attempt, tc.attempt)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v (%+v), want refused saying %q", err, out.Result, tc.want)
			case tc.want != "" && (got.attempt != 1 || w.ran() != before):
				t.Fatalf("refused on attempt %d with %d tasks run; want the first, and none", got.attempt, w.ran()-before)
			}
			if tc.want != "" {
				// brood tasks show says it was refused, and by whom.
				td, err := newEngine(c, q).Task(t.Context(), id)
				if err != nil || !td.Refused || td.Worker == "" || !strings.Contains(td.LastFailure, tc.want) {
					t.Fatalf("tasks show of a refused call: %+v, %v; want it refused by a worker, saying %q", td, err, tc.want)
				}
			}
		})
	}
}
