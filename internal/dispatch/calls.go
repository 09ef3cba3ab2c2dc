package dispatch

import (
	"encoding/json"
	"fmt"

	"github.com/broodhq/brood/internal/taskdir"
)

// Calls is the parent's own record of a task's tool calls, made from what
// the child's own code said of each call on its protocol pipe
// (protocol.ToolCall), never from the child's transcript, which the
// child's tools can write. It is kept beside the verdict, out of every
// child's reach (records/<id>.calls.json), rewritten whole (tmp+rename) at
// the end of each run with that run's calls after the earlier runs', and
// it is what the parent's guardrails judge and what `brood tasks log`
// compares the transcript with.
type Calls struct {
	TaskID string `json:"task_id"`
	// Runs are the runs recorded, by their Verdict.Run (0, then one per
	// resume): a run whose parent died before its end is missing.
	Runs  []int        `json:"runs"`
	Calls []CallRecord `json:"calls"`
	// Gaps says what the child said that did not fit its record (a call
	// out of order, an end of a call never started), once each kind; and a
	// run that said more than the record keeps.
	Gaps []string `json:"gaps,omitempty"`
	// Seal is brood's HMAC of the record (Seal empty) under the user's
	// record key, in the project's own records (taskdir.Records.Sealed):
	// .brood/records is in the project tree, where a repository can ship
	// one and an in-place writer can write one (report21).
	Seal string `json:"seal,omitempty"`
}

// callsSealKind is the seal kind of a calls record (taskdir.Seal).
const callsSealKind = "task-calls"

// WriteCalls writes c as task c.TaskID's record of its calls in r, sealed
// where r is the project's own records. Without a record key (a read-only
// HOME) it is written unsealed, and ReadCalls will not believe it.
func WriteCalls(r taskdir.Records, c Calls) error {
	c.Seal = ""
	if r.Sealed() {
		data, err := json.Marshal(c)
		if err != nil {
			return err
		}
		c.Seal = taskdir.SealWithKey(callsSealKind, data)
	}
	return r.WriteCalls(c.TaskID, c)
}

// ReadCalls reads task id's record of its calls from r. In the project's
// own records one whose seal does not hold (shipped, forged, written by
// another process than the parent's brood, or made before seals) is an
// error wrapping taskdir.ErrNotYours that names the file: never believed.
func ReadCalls(r taskdir.Records, id string) (*Calls, error) {
	var c Calls
	if err := r.ReadCalls(id, &c); err != nil {
		return nil, err
	}
	if c.TaskID != id {
		return nil, fmt.Errorf("calls record %s is for task %q, not %s: %w", r.CallsPath(id), c.TaskID, id, taskdir.ErrNotYours)
	}
	if !r.Sealed() {
		return &c, nil
	}
	seal := c.Seal
	c.Seal = ""
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	if !taskdir.HoldsWithKey(callsSealKind, data, seal) {
		return nil, fmt.Errorf("calls record %s: %w", r.CallsPath(id), taskdir.ErrNotYours)
	}
	c.Seal = seal
	return &c, nil
}

// CallRecord is one tool call as the parent recorded it.
type CallRecord struct {
	Run     int    `json:"run"`
	Tool    string `json:"tool"`
	Command string `json:"command,omitempty"`
	Path    string `json:"path,omitempty"`
	// Ended: the child said how it ended; a call that never ended (its
	// child was stopped) proves nothing.
	Ended   bool   `json:"ended"`
	IsError bool   `json:"is_error,omitempty"`
	Refused bool   `json:"refused,omitempty"`
	Output  string `json:"output,omitempty"` // bounded (protocol.MaxCallOutput)
}
