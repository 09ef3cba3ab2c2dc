package render

import (
	"encoding/json"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/tool"
)

// partial is --include-partial-messages: the root's model turns as
// Claude Code's stream_event lines (the Messages API's stream events,
// message_start to message_stop), and a system/status line as each turn's
// request goes out. brood's providers hand the agent loop text deltas and
// the finished tool calls, not their raw events, so the events are made
// from those: a text block's deltas as they arrive, a tool_use block's
// input in one input_json_delta once the call is complete, the turn's
// output tokens in message_delta.
type partial struct {
	on      bool
	started bool      // message_start is sent for the current turn
	open    string    // the open block's type ("" none)
	index   int       // the open block's index
	blocks  int       // blocks started in this turn
	tools   bool      // the turn called a tool (stop_reason tool_use)
	at      time.Time // when the turn's request went out
	// text is the open text block's deltas, redacted across their joins:
	// a secret the model streams in pieces goes out as its marker, never
	// in parts (tool.Stream; red team 21 P2-9).
	text *tool.Stream
}

// StreamEvent is one stream_event line.
type StreamEvent struct {
	Type            string  `json:"type"` // stream_event
	Event           any     `json:"event"`
	SessionID       string  `json:"session_id"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	UUID            string  `json:"uuid"`
	TTFTMs          *int64  `json:"ttft_ms,omitempty"`
	ThinkingDisplay string  `json:"thinking_display,omitempty"`
	APIMessageID    string  `json:"api_message_id"`
}

// StatusLine is Claude Code's system/status line (a request goes out).
type StatusLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	Status    string `json:"status"`
	SessionID string `json:"session_id"`
	UUID      string `json:"uuid"`
}

// Partial turns on --include-partial-messages (stream-json only) and
// returns h.
func (h *Headless) Partial(on bool) *Headless {
	h.partial.on = on && h.stream
	return h
}

// partialEvent follows ev for the stream events, called before Event
// handles it otherwise (the assistant line of a block comes after its
// deltas and before its content_block_stop, as in Claude Code's stream).
func (h *Headless) partialEvent(ev agent.Event) {
	if !h.partial.on {
		return
	}
	switch ev.Type {
	case agent.EvTurn:
		h.partialFlush()
		h.flushText()
		h.partialEnd()
		h.line(StatusLine{Type: "system", Subtype: "status", Status: "requesting", SessionID: SessionID(h.info.SessionPath), UUID: newUUID()})
		h.partial.at = time.Now()
	case agent.EvText:
		if h.partial.open != "text" {
			h.partialBlock(map[string]any{"type": "text", "text": ""}, "text")
			h.partial.text = h.secrets.Stream()
		}
		h.textDelta(h.partial.text.Push(ev.Text))
	case agent.EvToolCall:
		h.partialFlush()
		h.flushText() // the text block's assistant line, before its stop
		h.partial.tools = true
		input := ev.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		h.partialBlock(map[string]any{"type": "tool_use", "id": ev.ToolID, "name": wireTool(ev.Tool), "input": map[string]any{}}, "tool_use")
		for _, part := range []string{"", string(input)} {
			h.event(map[string]any{"type": "content_block_delta", "index": h.partial.index, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
	case agent.EvToolResult, agent.EvDone:
		h.partialFlush()
		h.flushText()
		h.partialEnd()
	}
}

// partialBlock closes the open block and starts one of type typ.
func (h *Headless) partialBlock(block map[string]any, typ string) {
	h.partialStart()
	h.partialStop()
	h.partial.open, h.partial.index = typ, h.partial.blocks
	h.partial.blocks++
	h.event(map[string]any{"type": "content_block_start", "index": h.partial.index, "content_block": block})
}

// partialStart sends the turn's message_start, once.
func (h *Headless) partialStart() {
	if h.partial.started {
		return
	}
	h.partial.started = true
	h.begun = append(h.begun, h.turn.id)
	ttft := time.Since(h.partial.at).Milliseconds()
	msg := map[string]any{"content": []any{}, "id": h.turn.id, "model": bareModel(h.info.Model), "role": "assistant",
		"stop_reason": nil, "stop_sequence": nil, "type": "message",
		"usage": map[string]int64{"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "input_tokens": 0, "output_tokens": 1}}
	h.line(StreamEvent{Type: "stream_event", Event: map[string]any{"type": "message_start", "message": msg},
		SessionID: SessionID(h.info.SessionPath), UUID: newUUID(), TTFTMs: &ttft, ThinkingDisplay: "updates", APIMessageID: h.turn.id})
}

// textDelta sends one text_delta of the open text block (none for "").
func (h *Headless) textDelta(text string) {
	if text != "" {
		h.event(map[string]any{"type": "content_block_delta", "index": h.partial.index, "delta": map[string]any{"type": "text_delta", "text": text}})
	}
}

// partialFlush sends what the open text block's stream holds back.
func (h *Headless) partialFlush() {
	if h.partial.open == "text" && h.partial.text != nil {
		h.textDelta(h.partial.text.Flush())
	}
}

// partialStop closes the open block.
func (h *Headless) partialStop() {
	if h.partial.open == "" {
		return
	}
	h.partialFlush()
	h.event(map[string]any{"type": "content_block_stop", "index": h.partial.index})
	h.partial.open = ""
}

// partialEnd ends the turn's message: its open block, message_delta
// (stop reason, output tokens) and message_stop.
func (h *Headless) partialEnd() {
	if !h.partial.started {
		return
	}
	h.partialStop()
	stop := "end_turn"
	if h.partial.tools {
		stop = "tool_use"
	}
	h.event(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int64{"output_tokens": h.turn.usage.Output}})
	h.event(map[string]any{"type": "message_stop"})
	h.partial = partial{on: true}
}

// event sends one stream_event line of the current turn.
func (h *Headless) event(ev map[string]any) {
	h.line(StreamEvent{Type: "stream_event", Event: ev, SessionID: SessionID(h.info.SessionPath), UUID: newUUID(), APIMessageID: h.turn.id})
}
