package temporal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	wf "github.com/broodhq/brood/internal/workflow"
)

// notInTip is, by task id, brood's reason for each writer of res whose
// change the tree the run came back with (in, as takeTip took it; start:
// the tree this submitter started the execution from) does not carry: a
// done, partial or checkpoint record with a change, not carried from an
// earlier execution, when that tree is unsigned (none, or start: nothing
// was chained into it), or when its tip's signature (v2) does not name
// the task. A tip signed with its list is the answer even when its tree
// is start (writers whose changes cancel out are both in it). A v1 tip
// names no tasks (it proves only that a step of this execution made the
// tree): in a run whose submission signs its workers every writer is
// refused (takeTip refuses such a tree before); in a run from before
// lists its writers are not checked. A submitter with no worker keys
// checks nothing (it takes the workflow's records as they are, and cannot
// tell an earlier execution's writers from this one's).
func (e *Engine) notInTip(in RunInput, start *codesnap.Snapshot, res *wf.Result) map[string]string {
	if res == nil || e.cfg.Workers == nil {
		return nil
	}
	unchanged := in.Tip == nil || in.TipSig == nil && (start == nil || in.Tip.Tree == start.Tree)
	var signed []string
	switch {
	case unchanged:
	case in.TipSig != nil && in.TipSig.V < 2 && in.Workers == nil:
		return nil
	case in.TipSig != nil && in.TipSig.V >= 2:
		signed = in.TipSig.Tasks
	}
	why := map[string]string{}
	for _, ph := range res.Phases {
		for _, c := range ph.Calls {
			if !writerDone(c) || slices.Contains(signed, c.TaskID) || in.Carried[c.TaskID] != "" {
				continue
			}
			why[c.TaskID] = notInTipWhy(in, unchanged, c.TaskID)
		}
	}
	return why
}

// writerDone: c is a call that says it finished with a change chained
// into the run's tree (a task id, a patch, a status the chain takes).
func writerDone(c wf.CallRecord) bool {
	switch c.Status {
	case dispatch.StatusDone, dispatch.StatusPartial, dispatch.StatusCheckpoint:
	default:
		return false
	}
	var res codesnap.Result
	return c.TaskID != "" && len(c.Code) > 0 && json.Unmarshal(c.Code, &res) == nil && res.Patch != nil
}

// notInTipWhy is brood's reason for one writer whose change is not in the
// tree the run came back with.
func notInTipWhy(in RunInput, unchanged bool, task string) string {
	if !unchanged && in.TipSig != nil && in.TipSig.V < 2 {
		return "the change of task " + task + " is not known to be in it: " + beforeLists(in.RunID)
	}
	if unchanged {
		return "the run came back with the tree it started from (no tree a worker built), so the change of task " + task +
			" is not in it: whatever completed the run's workflow on Temporal left the run's tree out"
	}
	names := "no writer"
	if in.TipSig != nil && len(in.TipSig.Tasks) > 0 {
		names = "only " + strings.Join(in.TipSig.Tasks, ", ")
	}
	return fmt.Sprintf("the tree the run came back with (tree %s) is signed with %s in it, not task %s: an earlier tree of the run, or its change was never put into it", in.Tip.Tree, names, task)
}

// refuseWriters marks the writers of res whose changes are not in the
// tree that lands (notInTip) not-applied, and says so on the run (its
// landed and reason): it returns what it said ("": none).
func refuseWriters(res *wf.Result, why map[string]string) string {
	if res == nil || len(why) == 0 {
		return ""
	}
	n := res.NotInTree(why)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("fleet: the change of %d writer call(s) is not in the tree the run came back with, so it was not landed (their records say why)", n)
}
