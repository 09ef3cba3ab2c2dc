package temporal

import (
	"cmp"
	"context"
	"strings"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	wf "github.com/broodhq/brood/internal/workflow"
)

// Plan outputs as the submitter takes them (docs/scale-out.md, "Who a
// submitter trusts"): whoever completes the run's workflow writes its
// outputs and each phase's output (an until_quiet's or votes' aggregate
// too), so the submitter makes them again from the call records it took
// (takeRecords: only what trusted workers signed) with the plan executor
// the local engine runs (wf.Execute, every call answered from those
// records: none runs), and keeps those instead of the workflow's.

// notRun answers the calls a recomputation finds no record of: none runs;
// each ends cancelled, with no output.
type notRun struct{}

func (notRun) Call(_ context.Context, spec call.Spec) (*call.Result, error) {
	return &call.Result{TaskID: cmp.Or(spec.Resume, spec.TaskID), Agent: spec.Agent, Status: dispatch.StatusCancelled,
		Error: "not run: the submitter recomputed the run's outputs from its calls' records"}, nil
}

// ownOutputs sets res's outputs, its phases' outputs and its usage to
// what the plan p (with inputs) makes of res's call records.
func ownOutputs(ctx context.Context, p *wf.Plan, inputs map[string]any, res *wf.Result) {
	if p == nil || res == nil {
		return
	}
	var lines []wf.JournalLine
	for _, ph := range res.Phases {
		for _, c := range ph.Calls {
			if c.Key == "" || c.TaskID == "" {
				continue
			}
			rec := c
			lines = append(lines, wf.JournalLine{Type: "start", Key: c.Key, TaskID: c.TaskID},
				wf.JournalLine{Type: "done", Key: c.Key, TaskID: c.TaskID, Rec: &rec})
		}
	}
	again := wf.Execute(context.WithoutCancel(ctx), p, wf.Options{RunID: res.RunID, Runner: notRun{}, Journal: wf.MemoryJournal(lines),
		Inputs: inputs, Concurrency: p.Concurrency, NewTaskID: dispatch.NewID})
	res.Outputs, res.Usage = again.Outputs, again.Usage // the usage of the records taken, as the local engine sums it
	byID := map[string]any{}
	for _, ph := range again.Phases {
		byID[ph.ID] = ph.Output
	}
	for i := range res.Phases {
		res.Phases[i].Output = byID[res.Phases[i].ID]
	}
}

// dropOutputs clears res's outputs and its phases' (its completer's),
// when the submitter has no plan of its own to make them again from, and
// says why in one line.
func dropOutputs(res *wf.Result, why string) {
	res.Outputs = nil
	for i := range res.Phases {
		res.Phases[i].Output = nil
	}
	res.Reason = strings.TrimPrefix(res.Reason+"; ", "; ") + "its outputs are not shown: " + why
}
