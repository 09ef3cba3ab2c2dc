package render

import (
	"encoding/json"

	"github.com/broodhq/brood/internal/model"
)

// The wire types of --output-format json and stream-json, in one place:
// Claude Code 2.1.332's field names and order
// (reference/claude-code-2.1.332/print-*.json) where a script would parse
// them, so a script written for `claude -p` reads brood's. The golden
// transcripts in testdata/*.txtar hold what they encode to
// (TestStreamGolden; go test -run TestStreamGolden -update rewrites them).

// Init is stream-json's first line.
type Init struct {
	Type           string      `json:"type"`
	Subtype        string      `json:"subtype"`
	Cwd            string      `json:"cwd"`
	SessionID      string      `json:"session_id"`
	Tools          []string    `json:"tools"`
	MCPServers     []MCPServer `json:"mcp_servers"`
	Model          string      `json:"model"`
	PermissionMode string      `json:"permissionMode"`
	Agents         []string    `json:"agents"`
	// Claude Code's other keys, with brood's values: no slash commands,
	// skills or plugins in a headless run, no analytics, children
	// sandboxed, no fast mode.
	APIKeySource            string   `json:"apiKeySource"`
	SlashCommands           []string `json:"slash_commands"`
	TerminalSlashCommands   []string `json:"terminal_slash_commands"`
	Skills                  []string `json:"skills"`
	Plugins                 []string `json:"plugins"`
	Capabilities            []string `json:"capabilities"`
	OutputStyle             string   `json:"output_style"`
	AnalyticsDisabled       bool     `json:"analytics_disabled"`
	ProductFeedbackDisabled bool     `json:"product_feedback_disabled"`
	UUID                    string   `json:"uuid"`
	SandboxEnabled          bool     `json:"sandbox_enabled"`
	OriginalCwd             string   `json:"original_cwd"`
	AdditionalDirectories   []string `json:"additional_directories"`
	FastModeState           string   `json:"fast_mode_state"`
	FastModeReason          string   `json:"fast_mode_disabled_reason"`
	PerTurnEffortActive     bool     `json:"per_turn_effort_active"`
	UltrathinkAvailable     bool     `json:"ultrathink_available"`
	UltrathinkTypedRaises   bool     `json:"ultrathink_typed_raises"`
	ViewMode                string   `json:"view_mode"`
	BroodVersion            string   `json:"brood_version,omitempty"`
	TranscriptPath          string   `json:"transcript_path"`
}

// MCPServer is an MCP server of the init line, whether the root got its
// tools, and where it was configured.
type MCPServer struct {
	Name   string `json:"name"`
	Status string `json:"status"` // connected | failed
	Source string `json:"source"` // dynamic (--mcp-config) | user | project
}

// MessageLine is an assistant or user message of stream-json. A
// subagent's own messages carry the id of the Agent (Task) call that
// started it in ParentToolUseID, its task id in AgentID, and its type and
// description, as Claude Code tags them.
type MessageLine struct {
	Type            string  `json:"type"` // assistant | user
	Message         any     `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	AgentID         string  `json:"agent_id,omitempty"`
	SessionID       string  `json:"session_id"`
	UUID            string  `json:"uuid"`
	Timestamp       string  `json:"timestamp"`
	SubagentType    string  `json:"subagent_type,omitempty"`
	TaskDescription string  `json:"task_description,omitempty"`
	// ToolUseMeta names the MCP tools an assistant line calls.
	ToolUseMeta []ToolUseMeta `json:"tool_use_meta,omitempty"`
	// ToolUseResult is a tool's result as data, on the root's user line
	// that carries it: the Agent (Task) tool's an *AgentResult, an MCP
	// tool's an *MCPResult.
	ToolUseResult any `json:"tool_use_result,omitempty"`
	// IsReplay marks a user message read on stdin and echoed back
	// (--replay-user-messages).
	IsReplay bool `json:"isReplay,omitempty"`
}

// ToolUseMeta is an MCP tool call's server and tool, as Claude Code names
// them (display_name: the tool's name, capitalised).
type ToolUseMeta struct {
	ID                string `json:"id"`
	DisplayName       string `json:"display_name"`
	ServerDisplayName string `json:"server_display_name"`
	ToolName          string `json:"tool_name"`
}

// MCPResult is an MCP tool's result as the server's content blocks
// (brood keeps their text).
type MCPResult struct {
	Content []TextBlock `json:"content"`
}

// AgentResult is what an Agent (Task) call did, in Claude Code's names:
// the subagent's task id (agentId), how it ended (completed, failed,
// async_launched for one started in the background), its transcript.
type AgentResult struct {
	IsAsync           bool   `json:"isAsync"`
	Status            string `json:"status"`
	AgentID           string `json:"agentId"`
	Description       string `json:"description"`
	Prompt            string `json:"prompt"`
	OutputFile        string `json:"outputFile"`
	CanReadOutputFile bool   `json:"canReadOutputFile"`
	CanContinueAgent  bool   `json:"canContinueAgent"`
}

// AssistantMessage is the Messages API message of an assistant line. Every
// block of one model turn has the turn's id and usage. StopReason and
// StopSequence are null, as in Claude Code's stream (its lines are
// snapshots taken while the turn streams).
type AssistantMessage struct {
	Content      []Content `json:"content"`
	ID           string    `json:"id"`
	Model        string    `json:"model"`
	Role         string    `json:"role"`
	StopReason   *string   `json:"stop_reason"`
	StopSequence *string   `json:"stop_sequence"`
	Type         string    `json:"type"`
	Usage        Usage     `json:"usage"`
	// ContextManagement is null, as in Claude Code's lines.
	ContextManagement *struct{} `json:"context_management"`
}

// UserMessage is the message of a user line: tool results.
type UserMessage struct {
	Role    string    `json:"role"`
	Content []Content `json:"content"`
}

// Content is one content block. A tool_result's Content is a string, or
// for the Agent (Task) tool and MCP tools a list of text blocks, as Claude
// Code sends them.
type Content struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   any             `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	// Raw, when set, is the whole block as the provider sent it (a
	// server_tool_use or web_search_tool_result block): it is written as
	// it is, and the other fields are unused.
	Raw json.RawMessage `json:"-"`
}

// MarshalJSON writes Raw when it is set, else the block's fields.
func (c Content) MarshalJSON() ([]byte, error) {
	if len(c.Raw) > 0 {
		return c.Raw, nil
	}
	type fields Content
	return json.Marshal(fields(c))
}

// TextBlock is a text block inside a tool_result's content list.
type TextBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// TaskStarted is the system line of a subagent's start. ToolUseID is the
// Agent (Task) call that started it (null for a grandchild: its call is
// in its parent's transcript, not the root's).
type TaskStarted struct {
	Type           string  `json:"type"`
	Subtype        string  `json:"subtype"`
	TaskID         string  `json:"task_id"`
	ToolUseID      *string `json:"tool_use_id"`
	Description    string  `json:"description"`
	SubagentType   string  `json:"subagent_type"`
	IsBackgrounded bool    `json:"is_backgrounded"`
	SpawnDepth     int     `json:"spawn_depth"`
	TaskType       string  `json:"task_type"` // local_agent
	Prompt         string  `json:"prompt"`
	UUID           string  `json:"uuid"`
	SessionID      string  `json:"session_id"`
}

// TaskProgress is a subagent's progress line: a batch of tool calls.
type TaskProgress struct {
	Type         string    `json:"type"`
	Subtype      string    `json:"subtype"`
	TaskID       string    `json:"task_id"`
	ToolUseID    *string   `json:"tool_use_id"`
	Description  string    `json:"description"`
	SubagentType string    `json:"subagent_type"`
	Usage        TaskUsage `json:"usage"`
	LastToolName string    `json:"last_tool_name"`
	UUID         string    `json:"uuid"`
	SessionID    string    `json:"session_id"`
}

// TaskNotification is the line of a subagent's end. Status is Claude
// Code's (completed, failed, stopped); BroodStatus is brood's own (done,
// partial, checkpoint, failed, rejected, killed, cancelled). Summary is
// the subagent's own summary (data from the child, as Claude Code's is);
// OutputFile its whole transcript.
type TaskNotification struct {
	Type         string    `json:"type"`
	Subtype      string    `json:"subtype"`
	TaskID       string    `json:"task_id"`
	ToolUseID    *string   `json:"tool_use_id"`
	Status       string    `json:"status"`
	OutputFile   string    `json:"output_file"`
	Summary      string    `json:"summary"`
	SummaryIsRpt bool      `json:"summary_is_report"`
	Usage        TaskUsage `json:"usage"`
	UUID         string    `json:"uuid"`
	SessionID    string    `json:"session_id"`
	SubagentType string    `json:"subagent_type"`
	BroodStatus  string    `json:"brood_status"`
	Tokens       Usage     `json:"tokens"`
}

// TaskUpdated says a subagent's state changed: its status and, when it
// ended, the time (ms since the epoch).
type TaskUpdated struct {
	Type      string    `json:"type"`
	Subtype   string    `json:"subtype"`
	TaskID    string    `json:"task_id"`
	Patch     TaskPatch `json:"patch"`
	UUID      string    `json:"uuid"`
	SessionID string    `json:"session_id"`
}

// TaskPatch is what changed.
type TaskPatch struct {
	Status  string `json:"status"`
	EndTime int64  `json:"end_time"`
}

// BackgroundTasks lists the root's subagents still running, each time the
// list changes (Claude Code's background_tasks_changed).
type BackgroundTasks struct {
	Type      string           `json:"type"`
	Subtype   string           `json:"subtype"`
	Tasks     []BackgroundTask `json:"tasks"`
	UUID      string           `json:"uuid"`
	SessionID string           `json:"session_id"`
}

// BackgroundTask is one running subagent.
type BackgroundTask struct {
	TaskID       string `json:"task_id"`
	TaskType     string `json:"task_type"`
	SubagentType string `json:"subagent_type"`
	Description  string `json:"description"`
}

// TaskUsage is a subagent's usage in task lines, Claude Code's shape: all
// its tokens (and its subagents'), its tool calls, its wall time.
type TaskUsage struct {
	TotalTokens int64 `json:"total_tokens"`
	ToolUses    int   `json:"tool_uses"`
	DurationMS  int64 `json:"duration_ms"`
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
