package render

import (
	"encoding/json"
	"time"
)

// Replay makes Start echo the user messages read on stdin (their
// contents as given), as Claude Code's --replay-user-messages does: one
// user line each, isReplay set, after the init line. Only stream-json
// prints them. It returns h.
func (h *Headless) Replay(contents []json.RawMessage) *Headless {
	h.replay = contents
	return h
}

// replayUser sends the lines Replay asked for (h.mu held).
func (h *Headless) replayUser() {
	if !h.stream {
		return
	}
	for _, c := range h.replay {
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
