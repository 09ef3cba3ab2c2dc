package agent

import (
	"encoding/json"

	"github.com/broodhq/brood/internal/model"
)

// EventType names an event of a run.
type EventType string

const (
	EvTurn           EventType = "turn"            // a model turn starts
	EvText           EventType = "text"            // streamed assistant text
	EvRestart        EventType = "restart"         // the provider retried: drop this turn's text so far
	EvToolCall       EventType = "tool_call"       // a tool call starts
	EvToolResult     EventType = "tool_result"     // a tool call finished
	EvServerTool     EventType = "server_tool"     // a block of a tool the provider ran (a web search, its result); Part is set
	EvNote           EventType = "note"            // a one-line notice about the run, before its first turn (a tool not offered)
	EvUsage          EventType = "usage"           // tokens of one turn, and the running total
	EvBudgetWarning  EventType = "budget_warning"  // 80% of the token budget used (advisory)
	EvBudgetExceeded EventType = "budget_exceeded" // 100% of the token budget used (advisory)
	EvInjected       EventType = "injected"        // a steering message or notice reached the model
	EvDone           EventType = "done"            // the run finished; Outcome is set
)

// Status is how a run ended.
type Status string

const (
	StatusDone      Status = "done"      // the model answered with no tool call
	StatusPartial   Status = "partial"   // the turn cap stopped it
	StatusFailed    Status = "failed"    // the model could not be reached
	StatusCancelled Status = "cancelled" // the context was cancelled
)

// Event is one item of a run's stream.
type Event struct {
	Type    EventType       `json:"type"`
	Turn    int             `json:"turn,omitempty"`
	Text    string          `json:"text,omitempty"`
	Tool    string          `json:"tool,omitempty"`
	ToolID  string          `json:"tool_id,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	// Refused (EvToolResult): brood refused the call; it never ran.
	Refused bool `json:"-"`
	// Ran (EvToolResult) is the input that ran when a hook replaced the
	// model's (nil otherwise).
	Ran   json.RawMessage `json:"-"`
	Usage *model.Usage    `json:"usage,omitempty"`
	// Part is the server tool's block (EvServerTool): a server_tool_use
	// or web_search_tool_result, with the provider's block in Part.Raw.
	Part  *model.Part  `json:"part,omitempty"`
	Total *model.Usage `json:"total,omitempty"`
	// Final (EvUsage) says the answer ends the run: it has no tool call,
	// and no paused turn or Stop hook can send the run back to the model.
	Final   bool     `json:"final,omitempty"`
	Outcome *Outcome `json:"outcome,omitempty"`
}

// Outcome is the end of a run.
type Outcome struct {
	Status Status      `json:"status"`
	Text   string      `json:"text"`            // the final (or, if partial, the latest) assistant text
	Error  string      `json:"error,omitempty"` // why it failed
	Turns  int         `json:"turns"`
	Usage  model.Usage `json:"usage"`
	// Messages is the whole conversation at the end, ready to continue.
	Messages []model.Message `json:"-"`
}
