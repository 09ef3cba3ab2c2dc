package render

import (
	"cmp"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/taskdir"
)

// agentCall is one of the root's Agent (Task) calls, as the model made
// it.
type agentCall struct {
	id, agent, desc, prompt string
	background              bool
}

// taskState is a running subagent as stream-json tells it.
type taskState struct {
	call     *agentCall // nil: a grandchild, or a call not told apart
	agent    string
	desc     string
	started  time.Time
	toolUses int
	tokens   model.Usage
	follow   follower // where its transcript has been read to
}

func (t *taskState) toolUseID() *string {
	if t.call == nil {
		return nil
	}
	return &t.call.id
}

func (t *taskState) prompt() string {
	if t.call == nil {
		return ""
	}
	return t.call.prompt
}

// startedTask is a subagent an Agent call started.
type startedTask struct {
	id, status, outputFile string
	call                   agentCall
}

// agentResult is the tool_use_result of the root's Agent call ev ends
// (nil for a call that started nothing).
func (h *Headless) agentResult(ev agent.Event) *AgentResult {
	st, ok := h.byCall[ev.ToolID]
	if !ok {
		return h.launched(ev)
	}
	delete(h.byCall, ev.ToolID)
	status := st.status
	switch {
	case st.call.background:
		status = "async_launched"
	case status == "":
		status = "failed"
	}
	return &AgentResult{IsAsync: st.call.background, Status: status, AgentID: st.id, Description: st.call.desc,
		Prompt: st.call.prompt, OutputFile: st.outputFile, CanReadOutputFile: st.outputFile != "", CanContinueAgent: true}
}

// startedIn finds the task id in the Task tool's answer to a call that
// started a subagent in the background ("… (task_id="ID") …", delegate's
// backgroundNote): that answer may come before the subagent's start event.
var startedIn = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`in the background \(task_id="([0-9A-Z]{26})"\)`)
})

// launched is the tool_use_result of a background call answered before its
// subagent's start event: async_launched, with the task id its answer
// names (nil if it names none).
func (h *Headless) launched(ev agent.Event) *AgentResult {
	c, ok := h.calls[ev.ToolID]
	m := startedIn().FindStringSubmatch(ev.Text)
	if !ok || !c.background || ev.IsError || m == nil {
		return nil
	}
	out := h.transcriptOf(spawn.Event{TaskID: m[1]})
	return &AgentResult{IsAsync: true, Status: "async_launched", AgentID: m[1], Description: c.desc, Prompt: c.prompt,
		OutputFile: out, CanReadOutputFile: out != "", CanContinueAgent: true}
}

// noteCall keeps an Agent (Task) call until the subagent it starts is
// announced (dispatch_start): that is how a task is matched to its
// tool_use id.
func (h *Headless) noteCall(ev agent.Event) {
	var in struct {
		SubagentType string `json:"subagent_type"`
		Description  string `json:"description"`
		Prompt       string `json:"prompt"`
		Background   bool   `json:"run_in_background"`
		Resume       string `json:"resume_task_id"`
	}
	_ = json.Unmarshal(ev.Input, &in)
	if in.SubagentType == "" {
		in.SubagentType = "general-purpose"
	}
	h.calls[ev.ToolID] = agentCall{id: ev.ToolID, agent: in.SubagentType, desc: in.Description, prompt: in.Prompt, background: in.Background}
	h.order = append(h.order, ev.ToolID)
}

// dropCall forgets a call that started nothing.
func (h *Headless) dropCall(id string) {
	delete(h.calls, id)
	for i, c := range h.order {
		if c == id {
			h.order = append(h.order[:i], h.order[i+1:]...)
			return
		}
	}
}

// matchCall finds the root's call that started the task ev announces: the
// one it names (ToolUseID), else the oldest one waiting of the same agent
// and description, else of the same agent, else the oldest. A grandchild's start (ev.Parent set) is none of
// the root's calls.
func (h *Headless) matchCall(ev spawn.Event) *agentCall {
	if ev.Parent != "" || len(h.order) == 0 {
		return nil
	}
	if c, ok := h.calls[ev.ToolUseID]; ok {
		h.dropCall(c.id)
		return &c
	}
	same := func(c agentCall) bool { return strings.EqualFold(c.agent, ev.Agent) }
	tests := []func(agentCall) bool{
		func(c agentCall) bool { return same(c) && c.desc == ev.Description },
		same,
		func(agentCall) bool { return true },
	}
	for _, ok := range tests {
		for _, id := range h.order {
			if c := h.calls[id]; ok(c) {
				h.dropCall(id)
				return &c
			}
		}
	}
	return nil
}

// DispatchEvent follows a child: task_started, task_progress and
// task_notification system lines, the subagent's own messages (tagged
// with the Agent call's id), and the subagent roll-up.
func (h *Headless) DispatchEvent(ev spawn.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stats.note(ev)
	t := h.tasks[ev.TaskID]
	if t == nil {
		t = &taskState{agent: ev.Agent, desc: ev.Description, started: time.Now()}
		h.tasks[ev.TaskID] = t
	}
	sid := SessionID(h.info.SessionPath)
	switch ev.Type {
	case "dispatch_start":
		t.call = h.matchCall(ev)
		if t.call != nil {
			t.desc = cmp.Or(t.desc, t.call.desc)
			h.byCall[t.call.id] = startedTask{id: ev.TaskID, call: *t.call, outputFile: h.transcriptOf(ev)}
		}
		if h.stream {
			h.backgroundTasks()
			h.line(TaskStarted{Type: "system", Subtype: "task_started", TaskID: ev.TaskID, ToolUseID: t.toolUseID(),
				Description: t.desc, SubagentType: ev.Agent, IsBackgrounded: t.call != nil && t.call.background,
				SpawnDepth: ev.Depth, TaskType: "local_agent", Prompt: t.prompt(), UUID: newUUID(), SessionID: sid})
		}
	case "usage":
		t.tokens = ev.Usage
	case "progress":
		h.follow(ev.TaskID, t, false)
		t.toolUses += len(ev.Tools)
		if h.stream && len(ev.Tools) > 0 {
			h.line(TaskProgress{Type: "system", Subtype: "task_progress", TaskID: ev.TaskID, ToolUseID: t.toolUseID(),
				Description: t.desc, SubagentType: ev.Agent, Usage: t.usage(t.tokens, time.Since(t.started).Milliseconds()),
				LastToolName: ev.Tools[len(ev.Tools)-1], UUID: newUUID(), SessionID: sid})
		}
	case "dispatch_stop":
		delete(h.tasks, ev.TaskID)
		status := claudeStatus(ev.Status)
		if t.call != nil {
			if st, ok := h.byCall[t.call.id]; ok {
				st.status = status
				h.byCall[t.call.id] = st
			}
		}
		if !h.stream {
			return
		}
		h.follow(ev.TaskID, t, true)
		h.line(TaskUpdated{Type: "system", Subtype: "task_updated", TaskID: ev.TaskID,
			Patch: TaskPatch{Status: status, EndTime: time.Now().UnixMilli()}, UUID: newUUID(), SessionID: sid})
		summary := h.summaryOf(ev)
		h.line(TaskNotification{Type: "system", Subtype: "task_notification", TaskID: ev.TaskID, ToolUseID: t.toolUseID(),
			Status: status, OutputFile: h.transcriptOf(ev), Summary: summary, SummaryIsRpt: summary != "",
			Usage: t.usage(ev.Usage, ev.WallMS), UUID: newUUID(), SessionID: sid,
			SubagentType: ev.Agent, BroodStatus: ev.Status, Tokens: usageOf(ev.Usage)})
		h.backgroundTasks()
	}
}

// backgroundTasks sends the list of the root's subagents still running.
func (h *Headless) backgroundTasks() {
	ids := slices.Sorted(maps.Keys(h.tasks))
	list := []BackgroundTask{}
	for _, id := range ids {
		if t := h.tasks[id]; t.call != nil {
			list = append(list, BackgroundTask{TaskID: id, TaskType: "local_agent", SubagentType: t.agent, Description: t.desc})
		}
	}
	h.line(BackgroundTasks{Type: "system", Subtype: "background_tasks_changed", Tasks: list, UUID: newUUID(), SessionID: SessionID(h.info.SessionPath)})
}

func (t *taskState) usage(u model.Usage, ms int64) TaskUsage {
	return TaskUsage{TotalTokens: u.Input + u.Output + u.CacheRead + u.CacheWrite, ToolUses: t.toolUses, DurationMS: ms}
}

// claudeStatus is Claude Code's name for how a subagent ended: completed
// (done, and partial or checkpoint: it returned a result), failed (also
// rejected by its parent's guardrails), or stopped (killed, cancelled).
func claudeStatus(s string) string {
	switch s {
	case "done", "partial", "checkpoint":
		return "completed"
	case "killed", "cancelled":
		return "stopped"
	}
	return "failed"
}

// taskDir is the directory of the root's own subagent ev names (nil for
// a grandchild: its directory is its parent's business).
func (h *Headless) taskDir(ev spawn.Event) *taskdir.Dir {
	if ev.Parent != "" || h.info.Root == "" {
		return nil
	}
	d, err := taskdir.Open(h.info.Root).Task(ev.TaskID)
	if err != nil {
		return nil
	}
	return d
}

// transcriptOf is the subagent's whole transcript: Claude Code's
// output_file.
func (h *Headless) transcriptOf(ev spawn.Event) string {
	if d := h.taskDir(ev); d != nil {
		return d.File(taskdir.Session)
	}
	return ""
}

// summaryOf is the subagent's own summary from its result.json: data the
// child wrote, read without following links beneath its task directory,
// as it is (the line is redacted like every other).
func (h *Headless) summaryOf(ev spawn.Event) string {
	d := h.taskDir(ev)
	if d == nil {
		return ""
	}
	var r struct {
		Summary string `json:"summary"`
	}
	if d.ReadJSON(taskdir.Result, &r) != nil {
		return ""
	}
	return r.Summary
}

// blocks are an assistant message's text and tool_use blocks in
// stream-json's shape.
func blocks(parts []model.Part) []Content {
	var out []Content
	for _, p := range parts {
		switch p.Type {
		case model.PartText:
			out = append(out, Content{Type: "text", Text: p.Text})
		case model.PartToolUse:
			out = append(out, Content{Type: "tool_use", ID: p.ID, Name: wireTool(p.Name), Input: p.Input})
		case model.PartServerToolUse, model.PartWebSearchResult:
			if serverBlock(p) {
				out = append(out, Content{Raw: p.Raw})
			}
		}
	}
	return out
}

// serverBlock reports whether p carries a provider's block that can go
// out as it is: a JSON object of p's own type (a child's transcript is
// its data, so a part is checked before its block is written).
func serverBlock(p model.Part) bool {
	var b struct {
		Type string `json:"type"`
	}
	return len(p.Raw) > 0 && p.Raw[0] == '{' && json.Unmarshal(p.Raw, &b) == nil && b.Type == string(p.Type)
}
