package temporal

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
)

// A chain step's tip (review25 P1-3, P2-2, P2-3, P3-3). Whoever completes
// the run's workflow task schedules the chain step and so chooses the tree
// it is handed as the run's tip: a worker that built on any tree and
// signed the result as this execution's tip would land a tree of their
// making (a snapshot in the fleet store, which every submitter writes) in
// the user's checkout. So a chain step builds only on a tree it can vouch
// for: the one the signed submission starts the execution from, or a tip
// a worker of the run's signed set signed in this execution, whose signed
// list then names the writers in it. By induction every tip a step signs
// holds exactly the changes of the writers its list names.

// notVouched is the refusal of a tip a chain step cannot vouch for.
const notVouched = "the run's tree handed to this step is neither the run's start nor a tip a trusted worker signed in this execution: nothing chained"

// vouchTip is the tree a chain step of info's execution, for the signed
// submission sub, builds on, and the writers whose changes are in it (its
// signed list): tip, when its signature sig checks for this execution,
// this submitter and this run with a key of the run's signed worker set
// (sub.Workers with own, the step's worker's key; a submission from before
// signed sets: trusted, the worker's own, with own); else the tree sub
// starts the execution from (its Tip, else its Code) when tip is that
// tree, with no writer of this execution. A v1 signature (no list) passes
// only in a run whose submission signs no worker set (from before lists).
// Anything else is the one-line refusal.
func vouchTip(info CallInfo, sub *Submission, own ed25519.PublicKey, trusted *Trust, task string, tip *codesnap.Snapshot, sig *TipSig) (*codesnap.Snapshot, []string, error) {
	if tip == nil {
		return nil, nil, fmt.Errorf("%s (no tree, the change of task %s)", notVouched, task)
	}
	if sig != nil && info.Run != "" && tipSigners(sub, own, trusted).checkTip(info.Namespace, info.Workflow, info.Run, info.Submitter, tip, sig) == nil {
		if sig.V < 2 && sub.Workers != nil {
			return nil, nil, fmt.Errorf("the run's tree handed to the chain step of task %s is signed by a worker from before tip lists, which does not say which writers' changes are in it: nothing chained; upgrade every worker, then run the plan again (brood workflow run; a resume of %s would start from this tree)", task, sub.Workflow)
		}
		if sig.V < 2 {
			return tip, nil, nil
		}
		return tip, slices.Clone(sig.Tasks), nil
	}
	start := sub.Tip
	if start == nil {
		start = sub.Code
	}
	if start != nil && tip.Tree == start.Tree && tip.Base == start.Base && tip.ObjectFormat == start.ObjectFormat {
		return start, nil, nil
	}
	return nil, nil, fmt.Errorf("%s (tree %s, the change of task %s)", notVouched, printable(tip.Tree), task)
}

// tipSigners are the keys whose tips a chain step of sub's run builds on:
// the run's signed worker set and own (as the workflow's gate takes
// results); for a submission that signs none, the worker's trusted and own.
func tipSigners(sub *Submission, own ed25519.PublicKey, trusted *Trust) *ResultTrust {
	t := NewTrust()
	if sub.Workers != nil {
		t = sub.Workers.resultTrust().trust
	} else if trusted != nil {
		for key, from := range trusted.keys {
			t.keys[key] = from
		}
	}
	if len(own) == ed25519.PublicKeySize {
		t.keys[string(own)] = "this worker's key"
	}
	return NewResultTrust(t, "")
}

// tipTasks are the writers whose changes are in the tip a chain step of
// task makes: prev, those of the tip it built on (vouchTip), and task when
// its change is in the tip (ch: applied with no conflict; a conflict
// leaves the tip as it was); sorted.
func tipTasks(task string, prev []string, ch *codesnap.Chained) []string {
	tasks := slices.Clone(prev)
	if ch != nil && ch.Applied && ch.Conflict == "" {
		tasks = append(tasks, task)
	}
	slices.Sort(tasks)
	return slices.Compact(tasks)
}

// chainTip is the tree a's chain step in builds on, the writers in it
// (vouchTip) and the tree its chain started from (chainRoot), for the
// run's signed submission; in.Tip as it is with no Trust or no submission
// (nothing is checked) and no list. A worker that runs anyone's
// submissions (AllowUnsigned) still vouches for the tree against the
// submission as its own key signed it: the tip it signs names that key,
// and only its submitter lands it.
func (a *Activities) chainTip(ctx context.Context, info CallInfo, in ChainInput) (*codesnap.Snapshot, []string, string, error) {
	var own ed25519.PublicKey
	var trusted *Trust
	if a.Keys != nil {
		own, trusted = a.Keys.own.Public().(ed25519.PublicKey), a.Keys.trusted
	}
	if a.Trust == nil || in.Signed == nil {
		// No signed start to vouch against: the tree as handed, with the
		// list and root of a tip its keys signed in this execution.
		signers := tipSigners(&Submission{}, own, trusted)
		s := in.TipSig
		if a.Keys == nil || in.Tip == nil || s == nil || s.V < 2 || info.Run == "" || signers.checkTip(info.Namespace, info.Workflow, info.Run, info.Submitter, in.Tip, s) != nil {
			return in.Tip, nil, chainRoot(info, nil, in.Tip, nil), nil
		}
		return in.Tip, slices.Clone(s.Tasks), chainRoot(info, signers, in.Tip, s), nil
	}
	sub, err := a.Trust.verifyOwn(ctx, a.Store, in.Signed)
	if err != nil {
		return nil, nil, "", err
	}
	from, prev, err := vouchTip(info, sub, own, trusted, in.TaskID, in.Tip, in.TipSig)
	if err != nil {
		return nil, nil, "", err
	}
	return from, prev, chainRoot(info, tipSigners(sub, own, trusted), from, in.TipSig), nil
}

// chainRoot is the tree the chain of a step handed tip (signed sig)
// started from: the Root sig carries when a key of signers signed tip in
// this execution (v2, from before roots: none), else tip's own tree (the
// step builds on the tree as handed: the run's start, or, in a run with
// no signed start, whatever the workflow handed it, which the submitter
// then refuses unless it is its own start: review26 P1-2).
func chainRoot(info CallInfo, signers *ResultTrust, tip *codesnap.Snapshot, sig *TipSig) string {
	if tip == nil {
		return ""
	}
	if sig != nil && signers != nil && sig.V >= 2 && info.Run != "" && signers.checkTip(info.Namespace, info.Workflow, info.Run, info.Submitter, tip, sig) == nil {
		return sig.Root
	}
	return tip.Tree
}

// chainClaimKey names the record of the chain step of task in the run of
// the signed submission s (whose claim binds it to one execution).
func chainClaimKey(s *Signed, task string) string {
	return fmt.Sprintf("fleet/chains/%s/%s", strings.TrimPrefix(claimKey(s), "fleet/claims/"), task)
}

// claimChain makes the step (its execution, activity id and input) the
// one chain step of its writer task in the run: a Temporal retry of it
// passes, any other step for that task is refused (a writer's change is
// put into the run's tree once). The steps of a run are so bounded by its
// writers, each a call of the run's signed bound with a result signed in
// this execution (signedChange). Nil Trust or no submission: nothing is
// claimed (nothing is checked either).
func (a *Activities) claimChain(ctx context.Context, in ChainInput, info CallInfo, activityID string) error {
	if a.Trust == nil || in.Signed == nil {
		return nil
	}
	if err := dispatch.CheckID(in.TaskID); err != nil {
		return refusedf("the chain step names no writer task (%q): refused, nothing chained", printable(in.TaskID))
	}
	key := chainClaimKey(in.Signed, in.TaskID)
	sub, err := a.Trust.verifyOwn(ctx, a.Store, in.Signed) // kept from AdmitChain: no read
	if err != nil {
		return err
	}
	err = a.claimOnce(ctx, key, info.Run+" "+activityID+" "+callDigest(in), sub)
	switch {
	case errors.Is(err, errForeignClaim):
		return foreignClaim(fmt.Sprintf("run %s: the chain step of task %s", info.Workflow, in.TaskID), key)
	case errors.Is(err, errClaimed):
		return refusedf("run %s: the change of task %s was put into the run's tree by another chain step already (its record: %s in the fleet store): a second step for one writer is refused, nothing chained; whoever scheduled it is not the run's workflow", info.Workflow, in.TaskID, key)
	case err != nil:
		return fmt.Errorf("claim the chain step of task %s in the fleet store: %w", in.TaskID, err)
	}
	return nil
}

// verifyOwn is s verified as verify does; on a worker that runs anyone's
// submissions (AllowUnsigned), by a key it does not trust, against s's own
// key instead of the allowlist (the payload as that key signed it).
func (t *Trust) verifyOwn(ctx context.Context, store Store, s *Signed) (*Submission, error) {
	if !t.AllowUnsigned || t.trusts(s.Key) {
		return t.verify(ctx, store, s) // kept from AdmitChain: no read
	}
	self := NewTrust()
	self.keys[string(s.Key)] = "the submission's own key"
	return self.verify(ctx, store, s)
}
