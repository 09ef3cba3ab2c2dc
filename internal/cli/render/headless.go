package render

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/jsonstr"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/termsafe"
	"github.com/broodhq/brood/internal/tool"
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
	// APIKeySource is where the model's key came from (ANTHROPIC_API_KEY,
	// none), as Claude Code's init line says.
	APIKeySource string
	// MCPServers are the configured MCP servers and how they fared.
	MCPServers []MCPServer
	// AddDirs are the directories --add-dir added.
	AddDirs []string
	// Root is the project root: its .brood/dispatch holds the subagents'
	// transcripts (stream-json's output_file, and their messages).
	Root string
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
	secrets *tool.Redactor // redact's, for the streamed text deltas (partial.go)
	turn    turnState
	// calls are the root's Agent (Task) calls not yet matched to the
	// subagent they started, by tool_use id, in call order (order).
	calls map[string]agentCall
	order []string
	tasks map[string]*taskState // the subagents running, by task id
	// started are the root's subagents by the tool_use id of the call
	// that started them, for the call's tool_use_result.
	byCall map[string]startedTask
	// partial is --include-partial-messages' state (partial.go).
	partial partial
	begun   []string          // the message ids partial sent a message_start for
	replay  []json.RawMessage // stdin's user messages to echo after init (Replay)
}

// turnState is the current model turn as stream-json tells it: every
// block of the turn has its message id and usage.
type turnState struct {
	id    string
	usage model.Usage
}

// NewHeadless writes to out; stream selects stream-json.
func NewHeadless(out io.Writer, stream bool) *Headless {
	return &Headless{out: out, stream: stream, stats: newSubagentStats(), inputs: map[string]json.RawMessage{},
		calls: map[string]agentCall{}, tasks: map[string]*taskState{}, byCall: map[string]startedTask{}, turn: turnState{id: newMessageID()}}
}

// Redacting makes every line h writes pass through redact (the process's
// redactor: environment secrets, the project's .env values, key formats)
// and returns h. A stream-json line leaves this process for a program or
// a log; what the model read (a child's Read of a .env file) goes out
// redacted.
func (h *Headless) Redacting(r *tool.Redactor) *Headless {
	h.redact, h.secrets = r.Redact, r
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
		Tools: nonNil(info.Tools), MCPServers: nonNilServers(info.MCPServers), Model: bareModel(info.Model), PermissionMode: info.PermissionMode,
		Agents: initAgents(info.Agents), APIKeySource: info.APIKeySource, SlashCommands: []string{}, Skills: []string{}, Plugins: []string{},
		Capabilities: []string{}, TerminalSlashCommands: []string{}, OutputStyle: "default", AnalyticsDisabled: true, ProductFeedbackDisabled: true,
		UUID: newUUID(), OriginalCwd: info.Cwd, AdditionalDirectories: nonNil(info.AddDirs),
		FastModeState: "off", FastModeReason: "unsupported", ViewMode: "default",
		BroodVersion: info.Version, TranscriptPath: info.SessionPath,
	})
	h.replayUser()
}

// Event follows the root agent.
func (h *Headless) Event(ev agent.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.time(ev.Type)
	h.partialEvent(ev)
	switch ev.Type {
	case agent.EvTurn:
		h.flushText()
		h.turn = turnState{id: newMessageID()}
	case agent.EvUsage:
		if ev.Usage != nil {
			h.turn.usage = *ev.Usage
		}
	case agent.EvText:
		h.text.WriteString(ev.Text)
	case agent.EvRestart:
		h.text.Reset()
	case agent.EvToolCall:
		h.flushText()
		if isAgentTool(ev.Tool) {
			h.stats.noteRequest(ev.Input)
			h.noteCall(ev)
		}
		h.inputs[ev.ToolID] = ev.Input
		h.assistant([]Content{{Type: "tool_use", ID: ev.ToolID, Name: wireTool(ev.Tool), Input: ev.Input}}, toolUseMeta(ev.ToolID, ev.Tool)...)
	case agent.EvServerTool:
		// The provider's own search: its call and its result are blocks
		// of the assistant's turn, as the Messages API returns them.
		h.flushText()
		if ev.Part != nil && serverBlock(*ev.Part) {
			h.assistant([]Content{{Raw: ev.Part.Raw}})
		}
	case agent.EvToolResult:
		if isAgentTool(ev.Tool) && ev.IsError {
			h.dropCall(ev.ToolID) // refused: it started no subagent
			if !strings.Contains(ev.Text, "<subagent-result") {
				h.stats.noteRefusal(ev.Text)
			}
		}
		if ev.IsError && strings.Contains(ev.Text, "permission") {
			h.denials = append(h.denials, PermissionDenial{ToolName: ev.Tool, ToolUseID: ev.ToolID, ToolInput: orEmpty(h.inputs[ev.ToolID])})
		}
		line := h.userLine(toolResult(ev.Tool, ev.ToolID, ev.Text, ev.IsError))
		switch {
		case isAgentTool(ev.Tool):
			if r := h.agentResult(ev); r != nil {
				line.ToolUseResult = r
			}
		case isMCPTool(ev.Tool) && !ev.IsError:
			line.ToolUseResult = &MCPResult{Content: []TextBlock{{Type: "text", Text: ev.Text}}}
		}
		if h.stream {
			h.line(line)
		}
	case agent.EvDone:
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
	h.assistant([]Content{{Type: "text", Text: h.text.String()}})
	h.text.Reset()
}

// assistant sends one of the root's assistant lines: a block of the
// current turn, with the turn's id and usage (and meta, for an MCP call).
func (h *Headless) assistant(content []Content, meta ...ToolUseMeta) {
	if !h.stream {
		return
	}
	h.line(MessageLine{Type: "assistant", Message: assistantMessage(content, h.turn.id, h.info.Model, h.turn.usage),
		SessionID: SessionID(h.info.SessionPath), UUID: newUUID(), Timestamp: stamp(time.Now()), ToolUseMeta: meta})
}

// isMCPTool reports whether name is an MCP server's tool (mcp__S__T).
func isMCPTool(name string) bool { return strings.HasPrefix(name, "mcp__") }

// toolUseMeta is the tool_use_meta of an MCP tool call (none for others).
func toolUseMeta(id, name string) []ToolUseMeta {
	srv, tl, ok := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__")
	if !isMCPTool(name) || !ok {
		return nil
	}
	display := tl
	if tl != "" {
		display = strings.ToUpper(tl[:1]) + tl[1:]
	}
	return []ToolUseMeta{{ID: id, DisplayName: display, ServerDisplayName: srv, ToolName: tl}}
}

// userLine is one of the root's user lines: tool results.
func (h *Headless) userLine(content ...Content) MessageLine {
	return MessageLine{Type: "user", Message: UserMessage{Role: "user", Content: content},
		SessionID: SessionID(h.info.SessionPath), UUID: newUUID(), Timestamp: stamp(time.Now())}
}

func assistantMessage(content []Content, id, mdl string, u model.Usage) AssistantMessage {
	return AssistantMessage{Content: content, ID: id, Model: bareModel(mdl), Role: "assistant", Type: "message", Usage: usageOf(u)}
}

// toolResult is a tool_result block: the Agent (Task) tool's and MCP
// tools' content is a list of text blocks, every other tool's a string,
// as in Claude Code.
func toolResult(tool, id, text string, isError bool) Content {
	c := Content{Type: "tool_result", ToolUseID: id, Content: text, IsError: isError}
	if isAgentTool(tool) || isMCPTool(tool) {
		c.Content = []TextBlock{{Type: "text", Text: text}}
	}
	return c
}

// isAgentTool reports whether name is the subagent tool: brood's Task,
// Claude Code's Agent.
func isAgentTool(name string) bool { return name == "Task" || name == "Agent" }

// wireTool is the name stream-json gives a tool call: Claude Code's Agent
// for brood's Task (the model is offered Task; a script reads Agent).
func wireTool(name string) string {
	if name == "Task" {
		return "Agent"
	}
	return name
}

// initAgents is the init line's agents: Claude Code's names for the
// built-ins it shares with brood (Explore, Plan for explore, plan; the
// Task tool takes either spelling), in Claude Code's order, by name
// whatever the case.
func initAgents(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		switch n {
		case "explore":
			n = "Explore"
		case "plan":
			n = "Plan"
		}
		out = append(out, n)
	}
	slices.SortStableFunc(out, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	return out
}

// bareModel is the model id without brood's provider prefix, as Claude
// Code names models.
func bareModel(spec string) string {
	_, id := splitModel(spec)
	return id
}

// stamp is a timestamp as Claude Code writes them (ISO 8601, UTC, ms).
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// newMessageID is a Messages API-like message id (msg_ and 24 hex digits).
func newMessageID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}

// Done sends the result object.
func (h *Headless) Done(o *agent.Outcome, sessionPath string, t Totals) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.partialFlush()
	h.flushText()
	h.partialEnd()
	r := NewResult(o, sessionPath, t, time.Since(h.started), h.stats, h.denials, h.timing)
	if h.stream {
		r.ModelUsageSinceLast = r.ModelUsage
	}
	if h.partial.on {
		r.BegunMessageIDs = nonNil(h.begun)
	}
	h.line(r)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilServers(s []MCPServer) []MCPServer {
	if s == nil {
		return []MCPServer{}
	}
	return s
}
