package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/spawn"
)

const mcpTaskNote = `

Over MCP: the call returns when the subagent finishes. If that may take longer than your client allows one tool call to run, pass run_in_background=true: you get a task_id at once; then call TaskOutput with task_id and a wait_seconds below that limit until its status is no longer running.`

// eager is the _meta that keeps a tool in Claude Code's prompt from the
// first turn instead of deferring it behind ToolSearch (Claude Code
// 2.1.332 defers every MCP tool by default; annotations and description
// length make no difference). Task and TaskOutput carry it: delegating is
// what a client connects brood for. A client that wants them deferred sets
// "alwaysLoad": false on the server in its MCP configuration, which
// Claude Code lets override this.
func eager() mcp.Meta { return mcp.Meta{"anthropic/alwaysLoad": true} }

func (s *Server) addTools() {
	yes := true
	no := false
	s.srv.AddTool(&mcp.Tool{
		Name:        "Task",
		Description: s.delegateDescription("Task") + mcpTaskNote,
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"subagent_type":{"type":"string","description":"The agent type to launch, from the list in this tool's description (default general-purpose)"},` +
			`"description":{"type":"string","description":"A short (3-7 word) label for the task"},` +
			`"prompt":{"type":"string","description":"The complete, self-contained brief for the subagent (or, with resume_task_id, the follow-up)"},` +
			`"context":{"type":"string","description":"Optional background beside the brief (what you know, constraints); it reaches the subagent as its own CONTEXT section"},` +
			`"isolation":{"type":"string","enum":["worktree","none"],"description":"worktree: the subagent works on its own copy of the tree and its changes come back as one patch; none: it works in the tree itself"},` +
			`"run_in_background":{"type":"boolean","description":"Return the task_id at once and let the subagent work; collect its result with TaskOutput"},` +
			`"resume_task_id":{"type":"string","description":"Continue this earlier task (its whole transcript intact) with prompt as the follow-up"}` +
			`},"required":["prompt"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{Title: "Delegate to a brood subagent", DestructiveHint: &yes, OpenWorldHint: &no},
		Meta:        eager(),
	}, s.task)
	s.srv.AddTool(&mcp.Tool{
		Name:        "TaskOutput",
		Description: "Get the status of a brood subagent task by task_id and, once it has finished, its verified result (wrapped as untrusted data). wait_seconds (default 0, at most 600) waits for a running task first; keep it below your client's per-call timeout.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"task_id":{"type":"string","description":"The task_id returned by Task"},` +
			`"wait_seconds":{"type":"number","description":"How long to wait for a running task (0-600)"}` +
			`},"required":["task_id"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{Title: "Read a brood task's result", ReadOnlyHint: true, OpenWorldHint: &no},
		Meta:        eager(),
	}, s.taskOutput)
	s.srv.AddTool(&mcp.Tool{
		Name:        "SendMessage",
		Description: "Send a message to a running brood subagent task. It reaches the subagent at its next turn boundary without interrupting the turn in progress, and is recorded in its transcript. Use it to correct course or add information.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"task_id":{"type":"string","description":"The running task to steer"},` +
			`"message":{"type":"string","description":"What to tell it"}` +
			`},"required":["task_id","message"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{Title: "Steer a running brood task", DestructiveHint: &no, OpenWorldHint: &no},
	}, s.sendMessage)
	s.srv.AddTool(&mcp.Tool{
		Name:        "TaskStop",
		Description: "Stop a running brood subagent task this server started. It is stopped in stages (SIGTERM, then SIGKILL), recorded as killed, and stays resumable with Task resume_task_id.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"task_id":{"type":"string","description":"The running task to stop"}` +
			`},"required":["task_id"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{Title: "Stop a brood task", DestructiveHint: &yes, OpenWorldHint: &no},
	}, s.taskStop)
	s.srv.AddTool(&mcp.Tool{
		Name:        "ListAgents",
		Description: "List the agent types brood can delegate to (subagent_type for Task): name, description, tools, whether it is read-only, its model and where it is defined.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{Title: "List brood's agents", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
	}, s.listAgents)
}

// delegateDescription is the description of brood's own tool of that name
// (Task, Workflow), the roster included.
func (s *Server) delegateDescription(name string) string {
	for _, t := range s.cfg.Dispatcher.Tools() {
		if spec := t.Spec(); spec.Name == name {
			return spec.Description
		}
	}
	return "brood's " + name + " tool."
}

type taskInput struct {
	SubagentType string `json:"subagent_type"`
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
	Context      string `json:"context"`
	Isolation    string `json:"isolation"`
	Background   bool   `json:"run_in_background"`
	ResumeTaskID string `json:"resume_task_id"`
}

func (s *Server) task(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in taskInput
	if err := unmarshal(req.Params.Arguments, &in); err != nil {
		return errorResult("Task: invalid input: %v; pass subagent_type, description and prompt", err), nil
	}
	if in.Isolation != "" && in.Isolation != "worktree" && in.Isolation != "none" {
		return errorResult("Task: isolation must be worktree or none, not %q", in.Isolation), nil
	}
	d := s.cfg.Dispatcher
	if in.SubagentType == "" {
		in.SubagentType = "general-purpose"
	}
	r := call.Spec{Agent: in.SubagentType, Prompt: in.Prompt, Description: in.Description, Context: in.Context, Isolation: in.Isolation}
	def, known := s.cfg.Registry.Get(r.Agent)
	background := in.Background || (in.ResumeTaskID == "" && known && def.Background)
	if background {
		return s.startBackground(ctx, in, r)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &watch{s: s, cancel: cancel, prog: newProgress(req)}
	defer w.untrack()
	if in.ResumeTaskID != "" {
		r = call.Spec{Resume: in.ResumeTaskID, Prompt: in.Prompt}
	}
	r.Watch.Events = func(e spawn.Event) { w.event(ctx, e) }
	out, err := d.Call(ctx, r)
	if err != nil {
		return errorResult("%v", err), nil
	}
	rejected := out.Status == dispatch.StatusRejected
	return textResult(out.Text, len(out.Failures) > 0 || rejected), nil
}

func (s *Server) startBackground(ctx context.Context, in taskInput, r call.Spec) (*mcp.CallToolResult, error) {
	d := s.cfg.Dispatcher
	id, verb := in.ResumeTaskID, "resumed"
	if id != "" {
		if err := d.ResumeBackground(ctx, id, in.Prompt); err != nil {
			return errorResult("%v", err), nil
		}
	} else {
		var err error
		if id, err = d.Start(ctx, r); err != nil {
			return errorResult("%v", err), nil
		}
		verb = "started"
	}
	return textResult(fmt.Sprintf("Task %s %s in the background (task_id=%q). Collect its result with TaskOutput(task_id=%q, wait_seconds=N), N below your client's per-call timeout; steer it with SendMessage, stop it with TaskStop.", id, verb, id, id), false), nil
}

// watch follows one foreground dispatch: the first start event is its own
// (descendants' events are relayed after it), which TaskStop may cancel.
type watch struct {
	s      *Server
	cancel context.CancelFunc
	prog   *progress

	mu   sync.Mutex
	id   string
	done func()
}

func (w *watch) event(ctx context.Context, e spawn.Event) {
	if e.Type == "dispatch_start" {
		w.mu.Lock()
		if w.id == "" {
			w.id = e.TaskID
			w.done = w.s.track(e.TaskID, w.cancel)
		}
		w.mu.Unlock()
	}
	w.prog.event(ctx, e)
}

func (w *watch) untrack() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done != nil {
		w.done()
	}
}

func (s *Server) taskOutput(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		TaskID string  `json:"task_id"`
		Wait   float64 `json:"wait_seconds"`
	}
	if err := unmarshal(req.Params.Arguments, &in); err != nil || in.TaskID == "" {
		return errorResult("TaskOutput needs task_id (from a Task call), and optionally wait_seconds"), nil
	}
	wait := time.Duration(min(max(in.Wait, 0), 600) * float64(time.Second))
	status, text, err := s.cfg.Dispatcher.Output(ctx, in.TaskID, wait)
	if err != nil {
		return errorResult("%v", err), nil
	}
	return textResult("status: "+status+"\n"+text, false), nil
}

func (s *Server) sendMessage(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		TaskID  string `json:"task_id"`
		Message string `json:"message"`
	}
	if err := unmarshal(req.Params.Arguments, &in); err != nil || in.TaskID == "" || strings.TrimSpace(in.Message) == "" {
		return errorResult("SendMessage needs task_id and message"), nil
	}
	if err := spawn.Send(s.cfg.ProjectRoot, in.TaskID, "the MCP client", in.Message); err != nil {
		return errorResult("%v", err), nil
	}
	return textResult(fmt.Sprintf("Message queued for task %s; it reaches the subagent at its next turn.", in.TaskID), false), nil
}

func (s *Server) taskStop(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		TaskID string `json:"task_id"`
	}
	if err := unmarshal(req.Params.Arguments, &in); err != nil || in.TaskID == "" {
		return errorResult("TaskStop needs task_id"), nil
	}
	if err := s.stop(in.TaskID); err != nil {
		return errorResult("%v", err), nil
	}
	return textResult(fmt.Sprintf("Task %s is being stopped; TaskOutput(task_id=%q) shows its final status once it has ended; it stays resumable with Task resume_task_id.", in.TaskID, in.TaskID), false), nil
}

func (s *Server) listAgents(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	b, err := json.MarshalIndent(s.agents(), "", "  ")
	if err != nil {
		return nil, err
	}
	return textResult(string(b), false), nil
}

func unmarshal(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	return json.Unmarshal(raw, v)
}

func textResult(text string, isErr bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}
}

func errorResult(format string, args ...any) *mcp.CallToolResult {
	return textResult(fmt.Sprintf(format, args...), true)
}
