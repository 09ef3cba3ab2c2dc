package hooks

import (
	"context"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/tool"
)

// ChildTools runs the user's PreToolUse and PostToolUse hooks for the
// subagents' own tool calls, which each child sends up the child protocol
// (protocol.Hook) and waits on. It runs in the root only, from the user's
// configuration (a child has no Runner). The payloads are Claude Code's for
// a call inside a subagent: the root session's common fields, with
// agent_id (the task id) and agent_type, as the root's dispatcher
// established them, never as the child said.
type ChildTools struct {
	s      *Session
	filter protocol.HookFilter
}

// ChildTools returns s's hooks for subagents' tool calls, or nil when
// neither event has a hook (then no child sends a request: no cost).
func (s *Session) ChildTools() *ChildTools {
	if s == nil {
		return nil
	}
	f := s.r.Filter()
	if len(f.Events()) == 0 {
		return nil
	}
	return &ChildTools{s: s, filter: f}
}

// Filter is the events with hooks and their matchers: children ask only
// for a call one of them selects.
func (c *ChildTools) Filter() protocol.HookFilter { return c.filter }

// Run chooses the hooks of h.Event for one call of a subagent (matched,
// trusted, their files pinned) and builds their payload; the child runs
// them itself, where its call ran and inside its confinement (RunHere).
// A hook's allow is a verdict the child's permission layer starts from:
// its deny rules and read-only scope still hold.
func (c *ChildTools) Run(ctx context.Context, h protocol.Hook) protocol.HookReply {
	if (h.Event != PreToolUse && h.Event != PostToolUse) || !c.s.r.Has(h.Event) {
		return protocol.HookReply{}
	}
	common := c.s.base(h.Event)
	common.AgentID, common.AgentType = h.TaskID, h.Agent
	if h.Mode != "" {
		common.PermissionMode = h.Mode
	}
	call := agent.ToolCall{Name: h.Tool, ID: h.ToolUseID, Input: h.Input}
	var payload any = preInput(common, call)
	if h.Event == PostToolUse {
		var res tool.Result
		if h.Response != nil {
			res = tool.Result{Content: h.Response.Content, IsError: h.Response.IsError}
		}
		payload = postInput(common, call, tool.HookResponse(h.Tool, h.Input, res), h.DurationMS)
	}
	cmds, data, err := c.s.r.prepare(h.Event, h.Tool, payload)
	if err != nil {
		c.s.r.report(Result{Failures: []string{err.Error()}})
		return protocol.HookReply{}
	}
	if len(cmds) == 0 {
		return protocol.HookReply{}
	}
	run := &protocol.HookRun{Event: h.Event, Payload: data}
	for _, cmd := range cmds {
		run.Commands = append(run.Commands, protocol.HookCommand{
			Command: cmd.Command, TimeoutMS: cmd.timeout().Milliseconds(), Pins: c.s.r.relPins(cmd.pins),
		})
	}
	return protocol.HookReply{Run: run}
}
