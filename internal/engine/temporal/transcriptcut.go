package temporal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/activity"

	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
)

// cutToCopy cuts a writer's transcript back to before its first tool call,
// for a call continued in place with no durable point (a retry with no
// heartbeat details: none of its attempts' beats reached the server) in a
// copy of the submitter's tree rebuilt from the snapshot alone. That copy
// has none of the change the earlier attempt's tools made in its own copy,
// so no tool's result may stay in the transcript: the model would go on
// from edits the copy lacks (syncTranscript does the same with the
// server's transcript when there is one). The transcript then ends at most
// with an answer nothing acted on, which the continuation acts on (a
// read-only tool runs again, the others get an "interrupted" result). A
// read-only agent's transcript is left whole (its caller does not cut it:
// its tools changed nothing).
func cutToCopy(td *taskdir.Dir) error {
	data, err := td.ReadFile(taskdir.Session, 0)
	if err != nil {
		return nil // nothing to cut: the child starts its transcript
	}
	at := toolsFrom(data)
	if at == len(data) {
		return nil
	}
	if err := td.WriteFile(taskdir.Session, data[:at], true); err != nil {
		return fmt.Errorf("continue task %s: %w", td.ID(), err)
	}
	return nil
}

// toolsFrom is the offset of a transcript's first tool record (a call
// about to run, or a result), len(data) when it has none.
func toolsFrom(data []byte) int {
	at := 0
	for line := range bytes.Lines(data) {
		var rec struct{ Type session.RecordType }
		if json.Unmarshal(line, &rec) == nil && (rec.Type == session.RecToolCall || rec.Type == session.RecToolResult) {
			return at
		}
		at += len(line)
	}
	return len(data)
}

// followUpMark is this worker's record, in a task's directory, of where a
// follow-up prompt (brood tasks resume ID "PROMPT") goes in the task's
// transcript for one workflow run's call: kept for a call that continues
// the task from this worker's own records with no transcript on the
// server naming where it starts (a resume whose input carries no From: a
// task with no call workflow on the fleet, a submitter from before From).
const followUpMark = "fleet-follow-up.json"

// followUpRecord is followUpMark's content: the call (workflow, run and
// activity ids, the same for each of its attempts) and the transcript's
// length before its follow-up.
type followUpRecord struct {
	Workflow string `json:"workflow"`
	Run      string `json:"run"`
	Activity string `json:"activity"`
	At       int64  `json:"at"`
}

// followUpOnce makes a call whose follow-up is still to be sent start it
// from the task's transcript as it was before any attempt of the call
// sent it, when the transcript is this worker's own (the task's records
// here) and no heartbeat names one: the first attempt to get here records
// where the follow-up goes, and a retry (its attempt died before a
// transcript with the follow-up reached the store) cuts the transcript
// back there, so the follow-up is asked once, not appended again after
// the earlier attempt's. A call with a transcript on the server has it
// made the task's transcript here instead (syncTranscript). this names
// the call (thisCall).
func (a *Activities) followUpOnce(this followUpRecord, id string, hb Heartbeat, followUp bool) error {
	if !followUp || !hb.Transcript.IsZero() || id == "" {
		return nil
	}
	td, err := taskdir.Open(a.ProjectRoot).Task(id)
	if err != nil || !td.Has(taskdir.Envelope) {
		return nil // not continued from records here
	}
	data, err := td.ReadFile(taskdir.Session, 0)
	if err != nil {
		data = nil // no transcript yet: the child starts one
	}
	var mark followUpRecord
	if td.ReadJSON(followUpMark, &mark) == nil && mark.Workflow == this.Workflow && mark.Run == this.Run && mark.Activity == this.Activity {
		if mark.At < 0 || mark.At >= int64(len(data)) {
			return nil
		}
		if err := td.WriteFile(taskdir.Session, data[:mark.At], true); err != nil {
			return fmt.Errorf("continue task %s: %w", id, err)
		}
		return nil
	}
	this.At = int64(len(data))
	if err := td.WriteJSON(followUpMark, this, true); err != nil {
		return fmt.Errorf("continue task %s: %w", id, err)
	}
	return nil
}

// thisCall names the attempt's call: the same for all its attempts.
func thisCall(ctx context.Context) followUpRecord {
	info := activity.GetInfo(ctx)
	return followUpRecord{Workflow: info.WorkflowExecution.ID, Run: info.WorkflowExecution.RunID, Activity: info.ActivityID}
}
