package dispatch

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
