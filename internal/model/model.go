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
	// PartServerToolUse is a tool call the provider ran itself (Anthropic's
	// web_search): ID, Name and Input are set, and Raw holds the block as
	// the provider sent it. The agent loop never runs it; it goes back
	// verbatim in the next request.
	PartServerToolUse PartType = "server_tool_use"
	// PartWebSearchResult is the provider's result of a web search it ran:
	// ToolUseID names its server_tool_use, Raw holds the block verbatim
	// (the results, encrypted as the provider sends them), Text a short
	// readable summary (titles and URLs) for transcripts.
	PartWebSearchResult PartType = "web_search_tool_result"
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

	// Raw is the provider's block as it arrived, for the blocks that must
	// go back verbatim: a server tool's call and result, and a text block
	// with citations (Text is its text). Only the provider that wrote it
	// reads it; others use the typed fields.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// IsServerTool reports whether p is a server tool's call or result: run
// by the provider, never by brood.
func (p Part) IsServerTool() bool {
	return p.Type == PartServerToolUse || p.Type == PartWebSearchResult
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
// A spec with Server set is a tool the provider runs itself (see
// ServerTool); Schema and Description are then unused.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"input_schema"`
	Server      *ServerTool     `json:"server,omitempty"`
}

// ServerToolWebSearch is the kind of the provider's web search tool.
const ServerToolWebSearch = "web_search"

// ServerTool is a tool the provider runs on its side (a web search): the
// model calls it and gets its result within one response, and brood runs
// nothing. Only a model that says it offers the kind (ServerTools) is sent
// one.
type ServerTool struct {
	// Kind is the tool's kind: ServerToolWebSearch.
	Kind string `json:"kind"`
	// MaxUses caps the calls in one response (0: the provider's default).
	MaxUses int `json:"max_uses,omitempty"`
	// AllowedDomains, when set, are the only domains a search may return;
	// BlockedDomains are never returned. The provider allows one or the
	// other, not both.
	AllowedDomains []string `json:"allowed_domains,omitempty"`
	BlockedDomains []string `json:"blocked_domains,omitempty"`
}

// ServerTools is implemented by a model whose provider runs some tools on
// its side; it names their kinds (ServerToolWebSearch).
type ServerTools interface {
	ServerTools() []string
}

// OffersServerTool reports whether m runs the server tool kind.
func OffersServerTool(m Model, kind string) bool {
	st, ok := m.(ServerTools)
	if !ok {
		return false
	}
	for _, k := range st.ServerTools() {
		if k == kind {
			return true
		}
	}
	return false
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
	// WebSearches counts the searches the provider ran (server-side web
	// search); they are priced per search, not per token.
	WebSearches int64 `json:"web_searches,omitempty"`
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:       u.Input + v.Input,
		Output:      u.Output + v.Output,
		CacheRead:   u.CacheRead + v.CacheRead,
		CacheWrite:  u.CacheWrite + v.CacheWrite,
		WebSearches: u.WebSearches + v.WebSearches,
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
//
// Block, when set, is a whole server tool block (a server_tool_use, or its
// web_search_tool_result) as soon as it is complete, so a consumer can show
// it in order with the text around it; it is in Done's message as well.
type Chunk struct {
	TextDelta string
	Restart   bool
	Block     *Part
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
