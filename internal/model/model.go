// Package model holds brood's one small interface to a language model and the
// message types every provider adapts to. Providers live in subpackages
// (anthropic, openai, script); nothing here imports them, and this package
// must never import the agent loop, tools or anything that spawns processes.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
)

// Role is who authored a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PartType names the kind of a content part.
type PartType string

const (
	PartText       PartType = "text"
	PartToolUse    PartType = "tool_use"
	PartToolResult PartType = "tool_result"
	PartThinking   PartType = "thinking"
	// PartRedactedThinking is reasoning the provider returns encrypted; it
	// must go back verbatim (Data) in the next request of a tool loop.
	PartRedactedThinking PartType = "redacted_thinking"
)

// Part is one block of a message. Only the fields that belong to its Type are
// set; the JSON form is what sessions store on disk, so field names are stable.
type Part struct {
	Type PartType `json:"type"`
	Text string   `json:"text,omitempty"`

	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	// tool_result
	ToolUseID string `json:"tool_use_id,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`

	// thinking: providers that sign their reasoning need it sent back verbatim.
	Signature string `json:"signature,omitempty"`
	// redacted_thinking: the opaque data to send back.
	Data string `json:"data,omitempty"`
}

// Message is one conversation turn.
type Message struct {
	Role    Role   `json:"role"`
	Content []Part `json:"content"`
}

// Text returns the concatenated text parts of m.
func (m Message) Text() string {
	var s string
	for _, p := range m.Content {
		if p.Type == PartText {
			s += p.Text
		}
	}
	return s
}

// ToolUses returns the tool_use parts of m in order.
func (m Message) ToolUses() []Part {
	var out []Part
	for _, p := range m.Content {
		if p.Type == PartToolUse {
			out = append(out, p)
		}
	}
	return out
}

// UserText builds a user message holding one text part.
func UserText(s string) Message {
	return Message{Role: RoleUser, Content: []Part{{Type: PartText, Text: s}}}
}

// ToolSpec describes a tool to the model. Schema is a JSON Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"input_schema"`
}

// Request is one call to the model.
type Request struct {
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int
	// Effort is low, medium, high, xhigh or max; empty means the provider default.
	Effort string
	// Agent names the agent making the call. Only the scripted model reads it
	// (to pick a script per agent); real providers ignore it.
	Agent string
}

// Usage counts tokens for one response, or a sum of several.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:      u.Input + v.Input,
		Output:     u.Output + v.Output,
		CacheRead:  u.CacheRead + v.CacheRead,
		CacheWrite: u.CacheWrite + v.CacheWrite,
	}
}

// Total is every token counted in u.
func (u Usage) Total() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Response is the complete answer to a Request.
type Response struct {
	Message    Message
	Usage      Usage
	StopReason string
	// Model is the model that answered, as the provider names it ("" when
	// it does not say).
	Model string
}

// Chunk is one item of a streamed response. Text chunks carry TextDelta; the
// last chunk carries Done and nothing else. A stream that ends without a Done
// chunk and without an error is a provider bug and is reported as one.
//
// Restart is set when a provider retried the request after a failure in the
// middle of a stream: the consumer must discard the text deltas it has seen so
// far for this request (they will be sent again). Done is always authoritative.
type Chunk struct {
	TextDelta string
	Restart   bool
	Done      *Response
}

// Model is the one interface the agent loop talks to. Stream must be safe for
// concurrent use by several goroutines (parallel subagents share nothing, but a
// parent may run several loops in one process in tests).
type Model interface {
	// Name is the provider/model string the model was built from.
	Name() string
	// Stream sends req and yields the response as it arrives. Breaking out of
	// the loop early cancels the request and releases its connection.
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

// ErrNoDone is returned when a stream ended without a final response.
var ErrNoDone = errors.New("model stream ended without a final response")

// Collect drains a stream and returns its final response, calling onText for
// each text delta (onText may be nil).
func Collect(ctx context.Context, m Model, req *Request, onText func(string)) (*Response, error) {
	for c, err := range m.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if c.Restart && onText != nil {
			onText("\n[retrying]\n")
		}
		if c.TextDelta != "" && onText != nil {
			onText(c.TextDelta)
		}
		if c.Done != nil {
			return c.Done, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, ErrNoDone
}
