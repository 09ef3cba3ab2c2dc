package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
	wf "github.com/broodhq/brood/internal/workflow"
)

// A bounded run (review17 P2-5). A worker admits a call under a signed
// submission while its run may go on (RunLifetime), and anyone who
// reaches the frontend can schedule activities naming a real one: without
// a bound, as many calls as they like on the workers' model keys. So the
// submission states the most calls its run may start (MaxCalls, signed),
// the workflow numbers each call it schedules (CallInput.Seq, 1 up), and
// a worker refuses a call whose number is past the bound, and a second,
// different call under a number already claimed: the first activity to
// run a number creates a record of it in the fleet's store, only if
// absent, naming its execution and activity id; a retry of that activity
// (attempt 2 on, which only the server makes) passes, any other is
// refused, the same call scheduled again under the same activity id too
// (a new activity starts at attempt 1: review25 P3-2).

// PlanCallBound is the most calls a plan's run may start, as its
// submitter signs it: its count when nothing depends on outputs, else the
// most its shape can start (until_quiet at its max_rounds), and for an
// each over outputs the plan's max_agents (DefaultMaxAgents when it sets
// none), which no run exceeds: the executor starts no agent past it.
func PlanCallBound(p *wf.Plan, inputs map[string]any) int {
	if p == nil {
		return 0
	}
	most := wf.DefaultMaxAgents
	if p.MaxAgents > 0 {
		most = p.MaxAgents
	}
	if inputs == nil {
		inputs = wf.DefaultInputs(p)
	}
	e := wf.EstimatePlan(p, inputs)
	switch {
	case e.Exact:
		return min(e.Agents, most)
	case len(e.Assumed) == 0:
		return min(e.Max, most)
	}
	return most
}

// callBound is the most calls the submission's run may start: the signed
// one, or (a submitter from before bounds) one for a single call and
// PlanCallBound for a plan.
func (sub *Submission) callBound() int {
	switch {
	case sub.MaxCalls > 0:
		return sub.MaxCalls
	case sub.Kind == "plan":
		return max(PlanCallBound(sub.Plan, sub.Inputs), 1)
	}
	return 1
}

// boundHint says what a user does about a bound a run reached.
func (sub *Submission) boundHint() string {
	if sub.Kind == "plan" {
		return "a plan whose calls depend on earlier outputs is bounded by its max_agents: raise it in the plan and run it again"
	}
	return "a single call's run starts one call"
}

// callClaimKey names the record of call number seq of the signed
// submission s.
func callClaimKey(s *Signed, seq int) string {
	return fmt.Sprintf("fleet/calls/%s/%d", strings.TrimPrefix(claimKey(s), "fleet/claims/"), seq)
}

// createStore is a store that creates a record only where none is
// (*blobstore.Store).
type createStore interface {
	Create(ctx context.Context, key string, data []byte) (Ref, error)
	ReadAll(ctx context.Context, ref Ref) ([]byte, error)
}

// admitSeq refuses a call whose number is not within its run's signed
// bound, or whose number another activity claimed (seqClaim). Nil Trust
// or AllowUnsigned: nothing is checked (nothing else is either).
// attempt is the activity's attempt (1: a new activity, not a retry).
func (a *Activities) admitSeq(ctx context.Context, in CallInput, run, activityID string, attempt int) error {
	if a.Trust == nil || a.Trust.AllowUnsigned || in.Signed == nil {
		return nil
	}
	sub, err := a.Trust.verify(ctx, a.Store, in.Signed) // kept from admit: no read
	if err != nil {
		return err
	}
	if sub.MaxCalls <= 0 {
		// A submitter from before bounded runs signed none: its run's
		// workflow numbers no call either (calls scheduled before the
		// upgrade go on as they were).
		return nil
	}
	bound := sub.callBound()
	switch {
	case in.Seq < 1:
		return refusedf("run %s: the call names no number within its run, and its submission signs a bound of %d calls: scheduled by a brood workflow from before bounded runs, or not brood's workflow: upgrade every worker, then brood workflow resume %s", sub.Workflow, bound, sub.Workflow)
	case in.Seq > bound:
		return refusedf("run %s: call number %d is past the %d calls its submitter signed for the run: refused, nothing run (%s)", sub.Workflow, in.Seq, bound, sub.boundHint())
	}
	return a.seqClaim(ctx, in.Signed, sub, in.Seq, run+" "+activityID+" "+callDigest(in), attempt)
}

// callDigest names the call (or chain step: claimChain) an activity
// runs: the SHA-256 of its whole input as JSON, the same on every retry
// of the activity. Temporal keeps an activity id unique only among
// pending activities, so the claim of a number names the call as well as
// its activity id: another call scheduled later under the same id is
// refused.
func callDigest[I CallInput | ChainInput](in I) string {
	b, _ := json.Marshal(in)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// seqClaim makes the activity (mine: its execution and activity id) the
// one call number seq of the run (submission sub, signed s) runs as, or
// refuses it when another activity has it, or when it is a new activity
// (attempt 1) of a call already claimed: the same call scheduled again
// under the same id, which would run it again on a worker with no record
// of its task.
func (a *Activities) seqClaim(ctx context.Context, s *Signed, sub *Submission, seq int, mine string, attempt int) error {
	key := callClaimKey(s, seq)
	found, byRun, err := a.claimOnceFound(ctx, key, mine, sub)
	switch {
	case errors.Is(err, errForeignClaim), err == nil && found && !byRun && attempt <= 1:
		return foreignClaim(fmt.Sprintf("run %s: call number %d", sub.Workflow, seq), key)
	case errors.Is(err, errClaimed):
		return refusedf("run %s: call number %d was claimed by another activity already (its record: %s in the fleet store): a second call under one number is refused, nothing run; whoever scheduled it is not the run's workflow", sub.Workflow, seq, key)
	case err != nil && !errors.As(err, new(refused)):
		return fmt.Errorf("claim call number %d of run %s in the fleet store: %w", seq, sub.Workflow, err)
	case err == nil && found && attempt <= 1:
		return refusedf("run %s: call number %d ran already as this very activity (its record: %s in the fleet store), and this is a new activity of it, not a retry: a call scheduled again under the same activity id is refused, nothing run; whoever scheduled it is not the run's workflow", sub.Workflow, seq, key)
	}
	return err
}

// errClaimed: another activity holds the record (claimOnce).
var errClaimed = errors.New("claimed by another activity")

// claimOnce creates the record key with mine, signed by this worker, only
// where none is, or finds it there with mine (a retry of the same
// activity); errClaimed when it holds another activity's claim a worker
// of the run of sub signed, errForeignClaim when it holds anything else
// (claimsig.go); a refusal when the store cannot create only where none
// is; else the store's error (tried again).
func (a *Activities) claimOnce(ctx context.Context, key, mine string, sub *Submission) error {
	_, byRun, err := a.claimOnceFound(ctx, key, mine, sub)
	if err == nil && !byRun {
		return errForeignClaim
	}
	return err
}

// claimOnceFound is claimOnce, and whether the record was there already
// with mine (found: an activity of the same claim took it before; byRun:
// a worker of the run claimed it, or this one now).
func (a *Activities) claimOnceFound(ctx context.Context, key, mine string, sub *Submission) (found, byRun bool, err error) {
	if _, ok := a.claimed.Load(key + " " + mine); ok {
		return true, true, nil
	}
	cs, ok := a.Store.(createStore)
	if !ok {
		return false, false, refusedf("the fleet store cannot create a record only where none is, so a second activity under one claim cannot be told from the first: use a file:// or s3:// store")
	}
	byRun = true
	_, err = cs.Create(ctx, key, a.Keys.claimRecordOf(key, mine))
	if errors.Is(err, blobstore.ErrExists) {
		// Whose claim it is, as its worker signed it (claimsig.go).
		var b []byte
		if b, err = claimRead(ctx, cs, key); err == nil {
			var run *Trust
			if a.Keys != nil {
				run = a.Keys.runWorkers(sub)
			}
			found, byRun, err = a.Keys.judgeClaim(key, mine, b, run)
		}
	}
	if err != nil {
		return false, false, err
	}
	if byRun {
		a.claimed.Store(key+" "+mine, true)
	}
	return found, byRun, nil
}
