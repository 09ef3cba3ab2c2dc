package render

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"io"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/jsonstr"
	"github.com/broodhq/brood/internal/termsafe"
)

// Info is what a run's output says about it before the first turn.
type Info struct {
	SessionPath    string
	Cwd            string
	Model          string
	Tools          []string
	Agents         []string
	PermissionMode string
	Version        string
}

// SessionID is a session's id: its transcript's file name without .jsonl.
func SessionID(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".jsonl")
}

// Headless writes Claude Code's headless shapes: with stream set
// (--output-format stream-json) one JSON object per line as the run goes
// (system init, assistant and user messages, subagent task events, the
// result); without it (--output-format json) only the final result object.
type Headless struct {
	mu      sync.Mutex
	out     io.Writer
	stream  bool
	info    Info
	started time.Time
	text    strings.Builder // assistant text of the current turn, not yet sent
	msgID   int
	stats   SubagentStats
	denials []PermissionDenial
	inputs  map[string]json.RawMessage // tool call id -> input, for permission_denials
	turnAt  time.Time                  // when the current model turn started
	first   bool                       // the current turn's first token is seen
	timing  Timing
	redact  func(string) string
}

// NewHeadless writes to out; stream selects stream-json.
func NewHeadless(out io.Writer, stream bool) *Headless {
	return &Headless{out: out, stream: stream, stats: newSubagentStats(), inputs: map[string]json.RawMessage{}}
}

// Redacting makes every line h writes pass through redact (the process's
// redactor: environment secrets, the project's .env values, key formats)
// and returns h. A stream-json line leaves this process for a program or
// a log; what the model read (a child's Read of a .env file) goes out
// redacted.
func (h *Headless) Redacting(redact func(string) string) *Headless {
	h.redact = redact
	return h
}

func (h *Headless) line(v any) {
	b, _ := json.Marshal(v)
	b = jsonstr.Map(b, h.redact)
	h.out.Write(append(termsafe.JSON(b), '\n')) // no 8-bit control or invisible character reaches a terminal
}

// Start sends the init message.
func (h *Headless) Start(info Info) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.info, h.started = info, time.Now()
	if !h.stream {
		return
	}
	h.line(Init{
		Type: "system", Subtype: "init", Cwd: info.Cwd, SessionID: SessionID(info.SessionPath),
		Tools: nonNil(info.Tools), MCPServers: []string{}, Model: info.Model, PermissionMode: info.PermissionMode,
		Agents: nonNil(info.Agents), BroodVersion: info.Version, TranscriptPath: info.SessionPath,
	})
}

// Event follows the root agent.
func (h *Headless) Event(ev agent.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.time(ev.Type)
	switch ev.Type {
	case agent.EvText:
		h.text.WriteString(ev.Text)
	case agent.EvRestart:
		h.text.Reset()
	case agent.EvToolCall:
		h.flushText()
		if ev.Tool == "Task" || ev.Tool == "Agent" {
			h.stats.noteRequest(ev.Input)
		}
		h.inputs[ev.ToolID] = ev.Input
		h.message("assistant", []Content{{Type: "tool_use", ID: ev.ToolID, Name: ev.Tool, Input: ev.Input}})
	case agent.EvToolResult:
		if ev.Tool == "Task" && ev.IsError && !strings.Contains(ev.Text, "<subagent-result") {
			h.stats.noteRefusal(ev.Text)
		}
		if ev.IsError && strings.Contains(ev.Text, "permission") {
			h.denials = append(h.denials, PermissionDenial{ToolName: ev.Tool, ToolUseID: ev.ToolID, ToolInput: orEmpty(h.inputs[ev.ToolID])})
		}
		h.message("user", []Content{{Type: "tool_result", ToolUseID: ev.ToolID, Content: ev.Text, IsError: ev.IsError}})
	case agent.EvTurn, agent.EvDone:
		h.flushText()
	}
}

// time follows the model calls: a turn starts at EvTurn, its first token
// is the first text or tool call, and it ends at its EvUsage.
func (h *Headless) time(t agent.EventType) {
	now := time.Now()
	switch t {
	case agent.EvTurn:
		h.turnAt, h.first = now, false
	case agent.EvText, agent.EvToolCall:
		if !h.first && !h.turnAt.IsZero() {
			h.first = true
			if h.timing.TTFT == 0 {
				h.timing.TTFT = now.Sub(h.turnAt)
			}
		}
	case agent.EvUsage:
		if !h.turnAt.IsZero() {
			h.timing.API += now.Sub(h.turnAt)
			h.turnAt = time.Time{}
		}
	}
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}

func (h *Headless) flushText() {
	if h.text.Len() == 0 {
		return
	}
	h.message("assistant", []Content{{Type: "text", Text: h.text.String()}})
	h.text.Reset()
}

func (h *Headless) message(role string, content []Content) {
	if !h.stream {
		return
	}
	m := Message{Role: role, Content: content}
	if role == "assistant" {
		h.msgID++
		m.Type, m.Model = "message", h.info.Model
	}
	h.line(MessageLine{Type: role, Message: m, SessionID: SessionID(h.info.SessionPath)})
}

// DispatchEvent follows a child: task_started, task_progress and
// task_notification system messages, and the subagent roll-up.
func (h *Headless) DispatchEvent(ev delegate.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stats.note(ev)
	if !h.stream {
		return
	}
	sid := SessionID(h.info.SessionPath)
	switch ev.Type {
	case "dispatch_start":
		h.line(TaskLine{Type: "system", Subtype: "task_started", TaskID: ev.TaskID, SubagentType: ev.Agent, SpawnDepth: ev.Depth, SessionID: sid})
	case "progress":
		h.line(TaskLine{Type: "system", Subtype: "task_progress", TaskID: ev.TaskID, SubagentType: ev.Agent, LastToolName: last(ev.Tools), SessionID: sid})
	case "dispatch_stop":
		u := usageOf(ev.Usage)
		h.line(TaskLine{Type: "system", Subtype: "task_notification", TaskID: ev.TaskID, SubagentType: ev.Agent, Status: ev.Status, Usage: &u, DurationMS: ev.WallMS, SessionID: sid})
	}
}

// Done sends the result object.
func (h *Headless) Done(o *agent.Outcome, sessionPath string, t Totals) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flushText()
	h.line(NewResult(o, sessionPath, t, time.Since(h.started), h.stats, h.denials, h.timing))
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
