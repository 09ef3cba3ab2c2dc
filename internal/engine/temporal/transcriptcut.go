package temporal

import (
	"bytes"
	"encoding/json"
	"fmt"

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
