package render

import (
	"encoding/json"
	"strings"

	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/model"
)

// The wire types of --output-format json and stream-json: Claude Code's
// field names (reference/claude-code-2.1.332/print-*.json) where a script
// would parse them, so a script written for `claude -p` reads brood's.

// Init is stream-json's first line.
type Init struct {
	Type           string   `json:"type"`
	Subtype        string   `json:"subtype"`
	Cwd            string   `json:"cwd"`
	SessionID      string   `json:"session_id"`
	Tools          []string `json:"tools"`
	MCPServers     []string `json:"mcp_servers"`
	Model          string   `json:"model"`
	PermissionMode string   `json:"permissionMode"`
	Agents         []string `json:"agents"`
	BroodVersion   string   `json:"brood_version,omitempty"`
	TranscriptPath string   `json:"transcript_path"`
}

// MessageLine is an assistant or user message of stream-json.
type MessageLine struct {
	Type            string  `json:"type"` // assistant | user
	Message         Message `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	SessionID       string  `json:"session_id"`
}

// Message is the Anthropic Messages API message inside a MessageLine.
type Message struct {
	Type    string    `json:"type,omitempty"`
	Role    string    `json:"role"`
	Model   string    `json:"model,omitempty"`
	Content []Content `json:"content"`
}

// Content is one content block.
type Content struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// TaskLine is a subagent's system message (task_started, task_progress,
// task_notification).
type TaskLine struct {
	Type         string `json:"type"`
	Subtype      string `json:"subtype"`
	TaskID       string `json:"task_id"`
	SubagentType string `json:"subagent_type"`
	SpawnDepth   int    `json:"spawn_depth,omitempty"`
	LastToolName string `json:"last_tool_name,omitempty"`
	Status       string `json:"status,omitempty"`
	Usage        *Usage `json:"usage,omitempty"`
	DurationMS   int64  `json:"duration_ms,omitempty"`
	SessionID    string `json:"session_id"`
}

// Usage is token usage in the Messages API's names.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

func usageOf(u model.Usage) Usage {
	return Usage{InputTokens: u.Input, CacheCreationInputTokens: u.CacheWrite, CacheReadInputTokens: u.CacheRead, OutputTokens: u.Output}
}

// PermissionDenial is a tool call the permission rules refused.
type PermissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// SubagentStats is the roll-up of the subagents a run spawned, refused and
// lost.
type SubagentStats struct {
	Spawned   int            `json:"spawned"`
	Completed int            `json:"completed"`
	Failed    int            `json:"failed"`
	Partial   int            `json:"partial"`
	Checkpt   int            `json:"checkpoint"`
	MaxDepth  int            `json:"max_depth"`
	Requested Requested      `json:"requested"`
	Killed    Killed         `json:"killed"`
	Refused   Refused        `json:"refused"`
	ByType    map[string]int `json:"by_type"`
	// InBackground counts the Task calls that asked for
	// run_in_background; BySubagents the spawned a subagent (not the
	// root) asked for.
	InBackground int `json:"started_in_background"`
	BySubagents  int `json:"spawned_by_subagents"`
}

// Requested counts Task calls by how they asked to run.
type Requested struct {
	Background int `json:"background"`
	Foreground int `json:"foreground"`
	Unset      int `json:"unset"`
}

// Killed counts children stopped before they finished: by their parent
// (cancelled: Ctrl-C, TaskStop), by the user (brood tasks kill) or by the
// system (lifeguard, hard timeout, a crash).
type Killed struct {
	Parent int `json:"parent"`
	User   int `json:"user"`
	System int `json:"system"`
}

// Refused counts Task calls that spawned nothing.
type Refused struct {
	DepthLimit       int `json:"depth_limit"`
	ConcurrencyLimit int `json:"concurrency_limit"`
	Budget           int `json:"budget"`
	Invalid          int `json:"invalid"` // unknown agent type, bad arguments, a refused definition
}

func newSubagentStats() SubagentStats { return SubagentStats{ByType: map[string]int{}} }

func (s *SubagentStats) note(ev delegate.Event) {
	switch ev.Type {
	case "dispatch_start":
		s.Spawned++
		s.ByType[ev.Agent]++
		s.MaxDepth = max(s.MaxDepth, ev.Depth)
		if ev.Depth > 1 {
			s.BySubagents++
		}
	case "dispatch_stop":
		switch ev.Status {
		case "done":
			s.Completed++
		case "partial":
			s.Partial++
		case "checkpoint":
			s.Checkpt++
		case "killed":
			s.Killed.System++
		case "cancelled":
			s.Killed.Parent++
		default:
			s.Failed++
		}
	}
}

func (s *SubagentStats) noteRequest(input json.RawMessage) {
	var in struct {
		Background *bool `json:"run_in_background"`
	}
	_ = json.Unmarshal(input, &in)
	switch {
	case in.Background == nil:
		s.Requested.Unset++
	case *in.Background:
		s.Requested.Background++
		s.InBackground++
	default:
		s.Requested.Foreground++
	}
}

func (s *SubagentStats) noteRefusal(text string) {
	t := strings.ToLower(text)
	switch {
	case strings.Contains(t, "depth"):
		s.Refused.DepthLimit++
	case strings.Contains(t, "concurren"):
		s.Refused.ConcurrencyLimit++
	case strings.Contains(t, "budget"):
		s.Refused.Budget++
	default:
		s.Refused.Invalid++
	}
}
