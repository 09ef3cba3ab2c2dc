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

// Run runs the hooks of h.Event for one call of a subagent. A hook's allow
// is a verdict the child's permission layer starts from: its deny rules
// and read-only scope still hold.
func (c *ChildTools) Run(ctx context.Context, h protocol.Hook) protocol.HookReply {
	common := c.s.base(h.Event)
	common.AgentID, common.AgentType = h.TaskID, h.Agent
	if h.Mode != "" {
		common.PermissionMode = h.Mode
	}
	call := agent.ToolCall{Name: h.Tool, ID: h.ToolUseID, Input: h.Input}
	switch h.Event {
	case PreToolUse:
		if !c.s.r.Has(PreToolUse) {
			return protocol.HookReply{}
		}
		g := c.s.beforeTool(ctx, common, call)
		return protocol.HookReply{Deny: g.Deny, Verdict: g.Verdict, Input: g.Input, Context: g.Context}
	case PostToolUse:
		if !c.s.r.Has(PostToolUse) {
			return protocol.HookReply{}
		}
		var res tool.Result
		if h.Response != nil {
			res = tool.Result{Content: h.Response.Content, IsError: h.Response.IsError}
		}
		resp := tool.HookResponse(h.Tool, h.Input, res)
		return protocol.HookReply{Context: c.s.afterTool(ctx, common, call, resp, h.DurationMS)}
	}
	return protocol.HookReply{}
}
