package render

import (
	"encoding/json"
	"time"
)

// ReplayUser echoes the user messages read on stdin (their contents as
// given), as Claude Code's --replay-user-messages does: one user line
// each, isReplay set, after the init line. Only stream-json prints them.
func (h *Headless) ReplayUser(contents []json.RawMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.stream {
		return
	}
	for _, c := range contents {
		h.line(MessageLine{Type: "user", Message: replayMessage{Role: "user", Content: c},
			SessionID: SessionID(h.info.SessionPath), UUID: newUUID(), Timestamp: stamp(time.Now()), IsReplay: true})
	}
}

// replayMessage is a user message as stdin gave it: content a string or
// blocks, kept as written.
type replayMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}
