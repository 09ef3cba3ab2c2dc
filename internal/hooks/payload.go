package hooks

import "encoding/json"

// The payloads a hook reads on stdin: Claude Code 2.1.332's fields (see
// ../shared/reference/claude-code-2.1.332/hooks/), plus, where brood knows
// more, one "brood" object of its own.

// Common are the fields of every payload.
type Common struct {
	SessionID      string  `json:"session_id"`
	TranscriptPath string  `json:"transcript_path"`
	Cwd            string  `json:"cwd"`
	PromptID       string  `json:"prompt_id,omitempty"`
	PermissionMode string  `json:"permission_mode,omitempty"`
	AgentID        string  `json:"agent_id,omitempty"`   // inside a subagent
	AgentType      string  `json:"agent_type,omitempty"` // inside a subagent
	Effort         *Effort `json:"effort,omitempty"`
	HookEventName  string  `json:"hook_event_name"`
}

// Effort is the reasoning effort of the run.
type Effort struct {
	Level string `json:"level"`
}

// SessionStartInput is SessionStart's payload.
type SessionStartInput struct {
	Common
	Source string `json:"source"` // startup | resume
}

// UserPromptSubmitInput is UserPromptSubmit's payload.
type UserPromptSubmitInput struct {
	Common
	Prompt string `json:"prompt"`
}

// PreToolUseInput is PreToolUse's payload.
type PreToolUseInput struct {
	Common
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
}

// PostToolUseInput is PostToolUse's payload.
type PostToolUseInput struct {
	Common
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse any             `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`
	DurationMS   int64           `json:"duration_ms"`
}

// ToolResponse is brood's tool_response: what the tool returned.
type ToolResponse struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// SubagentStartInput is SubagentStart's payload.
type SubagentStartInput struct {
	Common
	Brood *SubagentInfo `json:"brood,omitempty"`
}

// SubagentStopInput is SubagentStop's payload.
type SubagentStopInput struct {
	Common
	StopHookActive       bool             `json:"stop_hook_active"`
	AgentTranscriptPath  string           `json:"agent_transcript_path"`
	LastAssistantMessage string           `json:"last_assistant_message"`
	BackgroundTasks      []BackgroundTask `json:"background_tasks"`
	SessionCrons         []any            `json:"session_crons"`
	Brood                *SubagentInfo    `json:"brood,omitempty"`
}

// SubagentInfo is what brood adds about a subagent: its place in the tree
// and how it ended.
type SubagentInfo struct {
	TaskID       string `json:"task_id"`
	ParentTaskID string `json:"parent_task_id,omitempty"`
	Depth        int    `json:"depth"`
	Description  string `json:"description,omitempty"`
	Status       string `json:"status,omitempty"`    // done partial checkpoint failed killed cancelled
	KilledBy     string `json:"killed_by,omitempty"` // lifeguard timeout cancel signal
	// Late is set on a SubagentStop fired by a later brood process because
	// the one that started the subagent died first.
	Late bool `json:"late,omitempty"`
}

// StopInput is Stop's payload.
type StopInput struct {
	Common
	StopHookActive       bool             `json:"stop_hook_active"`
	LastAssistantMessage string           `json:"last_assistant_message"`
	BackgroundTasks      []BackgroundTask `json:"background_tasks"`
	SessionCrons         []any            `json:"session_crons"`
}

// BackgroundTask is one subagent still running in the background.
type BackgroundTask struct {
	ID          string `json:"id"`
	Type        string `json:"type"` // subagent
	Status      string `json:"status"`
	Description string `json:"description"`
	AgentType   string `json:"agent_type"`
}
