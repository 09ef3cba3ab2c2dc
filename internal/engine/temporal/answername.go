package temporal

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/broodhq/brood/internal/blobstore"
)

// A final answer named in the store (docs/scale-out.md, "A call whose
// child had already ended"). The boundary of the answer that ends a call
// (the child's word: call.Watch.Final) is made durable by a record in the
// fleet's store instead of a heartbeat: the heartbeat naming the answer's
// transcript, signed by this worker for this call and attempt, created
// only where none is under a name every attempt of the activity computes
// (its execution, activity id and whole input). A retry reads it and,
// when a worker key it trusts signed it for an earlier attempt of this
// very execution and task, continues from it: the transcript ends with
// the answer, and its child ends with it asking the model nothing. A
// short call so costs the server no heartbeat: its completion is its only
// write after its start.
//
// The name is not fenced by the server as a heartbeat is, and anyone who
// writes the store can create it first: what a retry finds there is taken
// only signed (a squatter's record is ignored, and this worker's own
// answer, which cannot be created then, goes by its heartbeat as before).
// An attempt stopped past its heartbeat timeout that comes back and
// creates it names an answer of this very call by a trusted worker, whole
// with its change: a retry returns that answer instead of another
// attempt's unfinished turns, asking nothing again. Create-once: the
// first answer named is the one every later attempt finds; a later
// attempt's own answer goes by its heartbeat.

// answerPrefix is where final answers are named in the store, one
// directory an execution (kept as the call claims are).
const answerPrefix = "fleet/answers/"

// maxAnswerRecord bounds the record a retry reads (a heartbeat: refs, a
// writer's partial change, a signature).
const maxAnswerRecord = 256 << 10

// answerKey is the name of the call's final answer in the store ("":
// not named there: a worker without keys, whose retries could not tell
// its record from anyone's, or a store that cannot create only where
// none is).
func (a *Activities) answerKey(ctx context.Context, in CallInput) string {
	if a.Keys == nil || !a.answerStore() {
		return ""
	}
	ai := activity.GetInfo(ctx)
	run := sha256.Sum256([]byte(ai.WorkflowExecution.RunID))
	sum := sha256.Sum256([]byte(ai.WorkflowExecution.RunID + "\x00" + ai.ActivityID + "\x00" + callDigest(in)))
	return answerPrefix + hex.EncodeToString(run[:16]) + "/" + hex.EncodeToString(sum[:])
}

// answerStore reports whether the store creates records only where none
// is and reads them back by name (*blobstore.Store).
func (a *Activities) answerStore() bool {
	_, ok := a.Store.(createStore)
	_, reads := a.Store.(claimReader)
	return ok && reads
}

// nameAnswer creates key with the record of hb, the answer's heartbeat,
// signed by this worker as the final answer of this call (info): true
// when the store has it within answerFor. false: the name was taken
// (another attempt's answer, or anyone's), the store failed, or it did
// not answer in time (a hanging store: the create is left to finish or
// fail by itself); the caller makes the answer durable by its heartbeat
// instead.
func (a *Activities) nameAnswer(ctx context.Context, key string, info CallInfo, hb Heartbeat) bool {
	cs, ok := a.Store.(createStore)
	if key == "" || !ok || a.Keys == nil || hb.Transcript.IsZero() || !hb.Result.IsZero() {
		return false
	}
	rec := AnswerRecord{Version: answerVersion, Answer: hb}
	rec.Answer.Signed, rec.Answer.RefusedBy = nil, nil
	rec.Final = a.Keys.signFinal(info, rec.Answer)
	data, err := json.Marshal(rec)
	if err != nil || len(data) > maxAnswerRecord {
		return false
	}
	err = within(ctx, answerFor(info), func(ctx context.Context) error {
		_, err := cs.Create(ctx, key, data)
		return err
	})
	if err != nil && !errors.Is(err, blobstore.ErrExists) {
		warn(ctx, "brood: the call's final answer could not be named in the store; making it durable by its heartbeat", "key", key, "error", err)
	}
	return err == nil
}

// answerVersion is the AnswerRecord version this worker writes and takes.
const answerVersion = 1

// answerFor bounds the store's work on a named answer (its create, a
// retry's read): half the heartbeat timeout, at least 0.5s (10s without
// one), so an answer whose name a hanging store does not take still goes
// by its heartbeat within the attempt's heartbeat timeout when that is 1s
// or more (no other beat reaches the server meanwhile: the child ended).
func answerFor(info CallInfo) time.Duration {
	if hbt := info.Heartbeat; hbt > 0 {
		return max(hbt/2, 500*time.Millisecond)
	}
	return 10 * time.Second
}

// within runs f with a context bounded by d and returns its error, or the
// context's once d passes even if f does not return (a store that hangs
// whatever its context says is left behind).
func within(ctx context.Context, d time.Duration, f func(context.Context) error) error {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		done <- f(bctx)
	}()
	select {
	case err := <-done:
		return err
	case <-bctx.Done():
		return fmt.Errorf("the store did not answer within %s: %w", d, bctx.Err())
	}
}

// warn logs to the activity's logger (nothing outside an activity).
func warn(ctx context.Context, msg string, kv ...any) {
	if activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Warn(msg, kv...)
	}
}

// namedAnswer is the final answer an earlier attempt of the call named
// under key, when a worker key this one trusts signed it as the final
// answer of this very execution, activity and input for an earlier
// attempt and for the call's own task (own; signFinal), and it goes at
// least as far as hb, the heartbeat the attempt would continue from
// otherwise, by transcript position (its length in bytes: the two are
// the same task's conversation in this execution, an honest attempt
// continuing from the last durable point, so the record of an answer is
// never shorter). Never over a finished attempt's stored result (hb's
// Result): that result is the call's, and a retry returns it.
func (a *Activities) namedAnswer(ctx context.Context, key string, info CallInfo, own string, hb Heartbeat) (Heartbeat, bool) {
	r, ok := a.Store.(claimReader)
	if key == "" || !ok || info.Attempt <= 1 || !hb.Result.IsZero() {
		return Heartbeat{}, false
	}
	var b []byte
	err := within(ctx, answerFor(info), func(ctx context.Context) error {
		var err error
		b, err = r.ReadRecord(ctx, key, maxAnswerRecord)
		return err
	})
	if err != nil {
		if !errors.Is(err, blobstore.ErrNotFound) {
			warn(ctx, "brood: the call's named answer could not be read; continuing from its heartbeat", "key", key, "error", err)
		}
		return Heartbeat{}, false
	}
	var rec AnswerRecord
	if json.Unmarshal(b, &rec) != nil || rec.Version != answerVersion {
		return Heartbeat{}, false // an older worker's record, or none of brood's
	}
	named := rec.Answer
	if named.Transcript.IsZero() || !named.Result.IsZero() || named.Signed != nil {
		return Heartbeat{}, false
	}
	if named.TaskID != cmp.Or(own, named.TaskID) {
		return Heartbeat{}, false
	}
	if err := a.Keys.checkFinal(info, named, rec.Final); err != nil {
		warn(ctx, "brood: the call's named answer is not taken; continuing from its heartbeat", "key", key, "why", err)
		return Heartbeat{}, false
	}
	if hb.TaskID != "" && hb.TaskID != named.TaskID || hb.Position > named.Position {
		return Heartbeat{}, false
	}
	named.RefusedBy = hb.RefusedBy
	return named, true
}

// completeNamed completes the attempt with out by a direct RPC, retried
// as a durable heartbeat is (durableFor: a server restarting): true when
// the server has it (the activity then returns ErrResultPending). false:
// no client or task token (an embedded test environment), the attempt is
// not the server's any more, or the limit passed; the SDK completes it as
// any other (tried once more).
func (a *Activities) completeNamed(ctx context.Context, out *CallOutput) bool {
	info := activity.GetInfo(ctx)
	if a.Client == nil || len(info.TaskToken) == 0 {
		return false
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.durableFor(ctx))
	defer cancel()
	// The serialization context the SDK's own completion gives the data
	// converter and the claim check.
	opts := client.CompleteActivityOptions{TaskToken: info.TaskToken, Result: out, Namespace: info.WorkflowNamespace,
		WorkflowID: info.WorkflowExecution.ID, ActivityType: info.ActivityType.Name, TaskQueue: info.TaskQueue}
	if info.WorkflowType != nil {
		opts.WorkflowType = info.WorkflowType.Name
	}
	wait := 100 * time.Millisecond
	for {
		err := a.Client.CompleteActivityWithOptions(cctx, opts)
		if err == nil {
			return true
		}
		if goneFor(err) {
			return false
		}
		t := time.NewTimer(wait)
		select {
		case <-cctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// takesNamed reports whether a retry continues from a named record rather
// than from hb, its resume point. Never while a follow-up is still to be
// sent from the transcript the record names: a named record is a signed
// heartbeat and says nothing of being final, so the follow-up's own
// earlier heartbeat (the earlier run's transcript, re-signed for this run)
// copied under the name would have the retry skip the follow-up and
// return the earlier run's answer as this call's (review44 P1-1).
func takesNamed(hb Heartbeat, followUp bool, named Heartbeat) bool {
	return !followUp || named.Transcript != hb.Transcript
}
