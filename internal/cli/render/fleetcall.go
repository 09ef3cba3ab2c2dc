package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// FleetCallResult prints a fleet call's result as a local one's (brood
// subagent --engine temporal, brood tasks resume of a fleet call): its
// --json has the same shape (result and output, what applies on the
// fleet: no local process, but the worker, the attempts and the call's
// times), with what became of its change in this tree (patch: applied or
// not-applied, and the files it changed here). The error is CallResult's
// exit for how the call ended.
func FleetCallResult(w io.Writer, r *call.Result, asJSON bool) error {
	if !asJSON {
		return CallResult(w, r, false)
	}
	var buf bytes.Buffer
	rerr := CallResult(&buf, r, true)
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		return fmt.Errorf("the call's result as JSON: %w", err)
	}
	m["patch"], m["files_changed"] = r.Patch, r.FilesChanged
	m["result"], m["output"] = fleetRecord(r), fleetOutput(r)
	if err := cmdutil.WriteJSON(w, m); err != nil {
		return err
	}
	return rerr
}

// fleetRecord is a fleet call's result record, the fields of a local
// call's (dispatch.Result) that the submitter has: usage is the call's
// with its children's, files_changed what its change changed here.
func fleetRecord(r *call.Result) map[string]any {
	files := r.FilesChanged
	if files == nil {
		files = []string{}
	}
	rec := map[string]any{"task_id": r.TaskID, "agent": r.Agent, "status": r.Status, "summary": r.Summary,
		"files_changed": files, "usage": r.Usage, "attempts": r.Attempts, "worker": r.Worker}
	if r.Error != "" {
		rec["error"] = r.Error
	}
	if r.Patch != "" {
		rec["patch"] = r.Patch
	}
	return rec
}

// fleetOutput is a fleet call's process record: no pid or exit code here
// (its child ran on the worker), but the worker, the attempts the fleet
// took, the call's wall time, from its submit to its end (the tag's
// duration), and how it splits: queued for a worker, then run.
func fleetOutput(r *call.Result) map[string]any {
	out := map[string]any{"worker": r.Worker, "attempts": r.Attempts}
	if r.QueuedMS > 0 || r.RanMS > 0 {
		out["queued_ms"], out["ran_ms"] = r.QueuedMS, r.RanMS
	}
	if d, ok := tagDuration(r.Text); ok {
		out["wall_ms"] = d.Milliseconds()
	}
	return out
}

// tagDuration is the duration="…" of a result's tag.
func tagDuration(text string) (time.Duration, bool) {
	const open, attr = "<subagent-result ", ` duration="`
	start := strings.Index(text, open)
	if start < 0 {
		return 0, false
	}
	tag, _, _ := strings.Cut(text[start:], ">")
	_, v, ok := strings.Cut(tag, attr)
	if !ok {
		return 0, false
	}
	v, _, _ = strings.Cut(v, `"`)
	d, err := time.ParseDuration(v)
	return d, err == nil
}
