package hooks

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"

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

	mu   sync.Mutex
	said map[string]bool // task, event, command: failures said once
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

// Run serves one hook request of a subagent's call. PreToolUse hooks run
// here, in the root, as the root's own do (its process, the project as
// their cwd, their files checked in the real tree): they decide, and need
// no file of the child's copy, as Claude Code runs them in its own
// process. A hook's allow is a verdict the child's permission layer
// starts from: its deny rules and read-only scope still hold. For
// PostToolUse, Run chooses the hooks (matched, trusted, their files
// pinned) and builds their payload; the child runs them itself, where its
// call ran (the file it wrote) and inside its confinement (RunHere). A
// request that reports a hook's failure there (h.Failed) is said here.
func (c *ChildTools) Run(ctx context.Context, h protocol.Hook) protocol.HookReply {
	if (h.Event != PreToolUse && h.Event != PostToolUse) || !c.s.r.Has(h.Event) {
		return protocol.HookReply{}
	}
	if h.Failed != nil {
		c.failed(h)
		return protocol.HookReply{}
	}
	common := c.s.base(h.Event)
	common.AgentID, common.AgentType = h.TaskID, h.Agent
	if h.Mode != "" {
		common.PermissionMode = h.Mode
	}
	call := agent.ToolCall{Name: h.Tool, ID: h.ToolUseID, Input: h.Input}
	if h.Event == PreToolUse {
		g := c.s.beforeTool(ctx, common, call)
		return protocol.HookReply{Deny: g.Deny, Verdict: g.Verdict, Input: g.Input, Context: g.Context}
	}
	var res tool.Result
	if h.Response != nil {
		res = tool.Result{Content: h.Response.Content, IsError: h.Response.IsError}
	}
	payload := postInput(common, call, tool.HookResponse(h.Tool, h.Input, res), h.DurationMS)
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

// maxFailuresSaid bounds the lines failed says in a run (a hostile child
// could fail a configured hook under many task ids it made up below it).
const maxFailuresSaid = 256

// failed says on the user's terminal, in one line, that a hook the root
// chose for a subagent's call failed where the subagent ran it: once per
// task, event and command, and only for a command of the user's hooks of
// that event which selects the tool (the child's words are not a
// channel to the terminal: control characters are dropped, the line
// clipped).
func (c *ChildTools) failed(h protocol.Hook) {
	f := h.Failed
	known := false
	for _, cmd := range c.s.r.commands(h.Event, h.Tool, toolAliases(h.Tool)) {
		known = known || cmd.Command == f.Command
	}
	if !known {
		return
	}
	key := h.TaskID + "\x00" + h.Event + "\x00" + f.Command
	c.mu.Lock()
	fresh := !c.said[key] && len(c.said) < maxFailuresSaid
	if fresh {
		if c.said == nil {
			c.said = map[string]bool{}
		}
		c.said[key] = true
	}
	c.mu.Unlock()
	if !fresh {
		return
	}
	line := printable(firstLine(f.Line))
	c.s.r.report(Result{Failures: []string{fmt.Sprintf("task %s (%s): %s hook %q failed in the subagent: %s",
		h.TaskID, printable(h.Agent), h.Event, printable(firstLine(f.Command)), line)}})
}

// printable is s without control characters (a tab is a space).
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r) || r == unicode.ReplacementChar:
			return -1
		}
		return r
	}, s)
}
