package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/workflow"
)

// List implements engine.Engine.
func (e *Engine) List(ctx context.Context) ([]engine.RunInfo, error) {
	ents, err := os.ReadDir(Root(e.cfg.ProjectRoot))
	if os.IsNotExist(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var out []engine.RunInfo
	for _, ent := range ents {
		if !ent.IsDir() || dispatch.CheckID(ent.Name()) != nil {
			continue
		}
		info, err := e.info(ent.Name(), false)
		if err != nil {
			continue
		}
		out = append(out, *info)
	}
	slices.SortFunc(out, func(a, b engine.RunInfo) int { return strings.Compare(b.RunID, a.RunID) })
	return out, nil
}

// Show implements engine.Engine.
func (e *Engine) Show(ctx context.Context, id string) (*engine.RunInfo, error) {
	if err := dispatch.CheckID(id); err != nil {
		return nil, fmt.Errorf("%w: %v", engine.ErrNotFound, err)
	}
	return e.info(id, true)
}

// info reads a run's records: running when some process holds its lock,
// else the status of its result, else interrupted (its process died).
func (e *Engine) info(id string, withResult bool) (*engine.RunInfo, error) {
	dir := e.dir(id)
	rec, err := readRun(dir, id)
	if err != nil {
		return nil, err
	}
	info := &engine.RunInfo{RunID: id, Plan: rec.Plan, Source: rec.Source, Engine: rec.Engine, Created: rec.Created}
	lines, _ := workflow.ReadJournal(filepath.Join(dir, workflow.JournalFile))
	info.Agents, info.Done, info.Failed, info.Running = workflow.Summary(lines)
	info.Calls = workflow.Statuses(lines)
	var res workflow.Result
	hasResult := readResult(dir, &res) == nil
	switch {
	case dispatch.TaskLocked(dir):
		info.Status = workflow.RunRunning
	case hasResult:
		info.Status, info.Reason, info.Usage = res.Status, res.Reason, res.Usage
		f := res.Finished
		info.Finished = &f
		info.Running = 0
	default:
		info.Status = workflow.RunInterrupted
		info.Reason = "its process died; continue it with brood workflow resume " + id
		info.Running = 0
	}
	if n := info.Calls["running"]; n > 0 && info.Status != workflow.RunRunning {
		// Open in the journal, but its run is over: it stopped with it.
		delete(info.Calls, "running")
		info.Calls["stopped"] += n
	}
	if hasResult {
		info.ResultRef = filepath.Join(dir, ResultFile)
		if withResult {
			info.Result = &res
		}
	}
	return info, nil
}
