package workflow

import (
	"os"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/taskdir"
	wf "github.com/broodhq/brood/internal/workflow"
)

// keptWord marks a fleet run listed from this project's copy of its result.
const keptWord = "read from this project's kept result: the fleet was not reached or no longer has the run"

// keptFleetRuns are the fleet runs whose result this project keeps
// (.brood/workflows/<id>/result.json with no run.json: a local run has
// one), listed when the fleet does not answer (fleetqa3 P2-3).
func keptFleetRuns(projectRoot string) []engine.RunInfo {
	if projectRoot == "" {
		return nil
	}
	ents, _ := os.ReadDir(taskdir.Open(projectRoot).WorkflowsDir())
	var out []engine.RunInfo
	for _, e := range ents {
		if info := keptFleetRun(projectRoot, e.Name()); info != nil {
			out = append(out, *info)
		}
	}
	return out
}

// keptFleetRun is one fleet run read from this project's kept result (nil:
// none kept, or a local run).
func keptFleetRun(projectRoot, id string) *engine.RunInfo {
	res, file := local.KeptFleetResult(projectRoot, id)
	if res == nil {
		return nil
	}
	info := &engine.RunInfo{RunID: id, Plan: res.Plan, Engine: "temporal", Status: res.Status, Created: res.Started,
		Agents: res.Agents, Usage: res.Usage, ResultRef: file, Result: res, Calls: wf.CallStatuses(res)}
	info.Reason = keptWord
	if res.Reason != "" {
		info.Reason = res.Reason + "; " + keptWord
	}
	if !res.Finished.IsZero() {
		fin := res.Finished
		info.Finished = &fin
	}
	for _, ph := range res.Phases {
		for _, c := range ph.Calls {
			switch {
			case c.Output != nil:
				info.Done++
			case c.Status != wf.CallCancelled && c.Status != wf.CallSkipped:
				info.Failed++
			}
		}
	}
	return info
}
