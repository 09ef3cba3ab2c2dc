package childrun

import (
	"context"
	"encoding/json"
	"github.com/broodhq/brood/internal/spawn"
	"io"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/hooks"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/tool"
)

// parentLink is the child's end of the requests it sends up (permission
// asks, hook requests): it sends them and reads the replies from stdin,
// whose end (EOF) means the parent is gone.
type parentLink struct {
	out   *events
	mu    sync.Mutex
	asks  map[string]chan spawn.Answer
	hooks map[string]chan protocol.HookReply
	turns map[string]chan struct{} // turn boundaries waiting (turnwire.go)
	gone  bool
	// hookFilter is the hook events the root runs and their matchers
	// (EnvHooksParent).
	hookFilter protocol.HookFilter
}

// read delivers replies until stdin ends, then calls gone.
func (l *parentLink) read(r io.Reader, gone func()) {
	for m, err := range protocol.Read(r) {
		if err != nil {
			continue
		}
		switch m := m.(type) {
		case protocol.Answer:
			l.mu.Lock()
			ch := l.asks[m.ID]
			delete(l.asks, m.ID)
			l.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case protocol.HookReply:
			l.mu.Lock()
			ch := l.hooks[m.ID]
			delete(l.hooks, m.ID)
			l.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case protocol.TurnReply:
			l.turnReply(m)
		}
	}
	l.mu.Lock()
	l.gone = true
	for id, ch := range l.asks {
		close(ch)
		delete(l.asks, id)
	}
	for id, ch := range l.hooks {
		close(ch)
		delete(l.hooks, id)
	}
	for id, ch := range l.turns {
		close(ch)
		delete(l.turns, id)
	}
	l.mu.Unlock()
	gone()
}

// ask sends a question up and waits for its answer; the parent gone or ctx
// ended is a denial.
func (l *parentLink) ask(ctx context.Context, a spawn.Ask) spawn.Answer {
	a.ID = protocol.NewAskID()
	ch := make(chan spawn.Answer, 1)
	l.mu.Lock()
	if l.gone {
		l.mu.Unlock()
		return spawn.Answer{}
	}
	if l.asks == nil {
		l.asks = map[string]chan spawn.Answer{}
	}
	l.asks[a.ID] = ch
	l.mu.Unlock()
	l.out.send(a)
	select {
	case ans, ok := <-ch:
		if ok {
			ans.ID = ""
			return ans
		}
	case <-ctx.Done():
		l.mu.Lock()
		delete(l.asks, a.ID)
		l.mu.Unlock()
	}
	return spawn.Answer{}
}

// relay is the AskFunc of a child's own dispatcher: its children's
// questions go on up (nil when no one above takes them).
func (l *parentLink) relay() spawn.AskFunc {
	if l == nil {
		return nil
	}
	return l.ask
}

// hook sends a hook request up and waits for the reply; ok is false when
// the parent went away (or ctx ended) first.
func (l *parentLink) hook(ctx context.Context, h protocol.Hook) (protocol.HookReply, bool) {
	h.ID = protocol.NewHookID()
	ch := make(chan protocol.HookReply, 1)
	l.mu.Lock()
	if l.gone {
		l.mu.Unlock()
		return protocol.HookReply{}, false
	}
	if l.hooks == nil {
		l.hooks = map[string]chan protocol.HookReply{}
	}
	l.hooks[h.ID] = ch
	l.mu.Unlock()
	l.out.send(h)
	select {
	case rep, ok := <-ch:
		return rep, ok
	case <-ctx.Done():
		l.mu.Lock()
		delete(l.hooks, h.ID)
		l.mu.Unlock()
	}
	return protocol.HookReply{}, false
}

// linkHooks is a child dispatcher's ToolHooks: its children's requests go
// on up, through this process's own link.
type linkHooks struct{ l *parentLink }

func (h linkHooks) Filter() protocol.HookFilter { return h.l.hookFilter }

func (h linkHooks) Run(ctx context.Context, req protocol.Hook) protocol.HookReply {
	rep, ok := h.l.hook(ctx, req)
	if !ok && req.Event == protocol.HookPreToolUse {
		rep.Deny = "the root did not answer the PreToolUse hook request (its parent is gone)"
	}
	return rep
}

// toolHooks returns the ToolHooks a child's own dispatcher relays with
// (nil when the root runs no tool-call hooks).
func (l *parentLink) toolHooks() spawn.ToolHooks {
	if l == nil || len(l.hookFilter.Events()) == 0 {
		return nil
	}
	return linkHooks{l}
}

// childAgentHooks are a child's agent-loop hooks: each tool call a
// matcher of an event the root runs selects is asked up, and the child
// waits for the reply (its heartbeat goes on); any other call costs no
// round trip. Nil when the root runs none: no cost.
type childAgentHooks struct {
	l   *parentLink
	env *dispatch.Envelope
	// here is where the PostToolUse hooks the root chose run (hookPlace).
	here hooks.Here

	mu   sync.Mutex
	sent map[string]bool // hook commands whose failure was sent up
}

func newChildAgentHooks(l *parentLink, env *dispatch.Envelope, here hooks.Here) agent.Hooks {
	if l == nil || len(l.hookFilter.Events()) == 0 {
		return nil
	}
	return &childAgentHooks{l: l, env: env, here: here}
}

func (c *childAgentHooks) request(event string, call agent.ToolCall) protocol.Hook {
	return protocol.Hook{Event: event, TaskID: c.env.TaskID, Agent: c.env.TargetAgent, Depth: c.env.Depth,
		Tool: call.Name, ToolUseID: call.ID, Input: call.Input, Mode: c.env.Permissions.Mode}
}

// BeforeTool asks the root's PreToolUse hooks.
func (c *childAgentHooks) BeforeTool(ctx context.Context, call agent.ToolCall) agent.ToolGate {
	if !c.l.hookFilter.Selects(protocol.HookPreToolUse, call.Name) {
		return agent.ToolGate{}
	}
	rep, ok := c.l.hook(ctx, c.request(protocol.HookPreToolUse, call))
	if !ok {
		return agent.ToolGate{Deny: "the root did not answer the PreToolUse hook request (its parent is gone)"}
	}
	// PreToolUse hooks ran in the root (they decide, and need no file of
	// this child's copy): a reply that asks this child to run some is not
	// taken.
	g := agent.ToolGate{Deny: rep.Deny, Context: rep.Context}
	if rep.Verdict == tool.HookAllow || rep.Verdict == tool.HookAsk {
		g.Verdict = rep.Verdict
	}
	if g.Deny == "" && len(rep.Input) > 0 && json.Valid(rep.Input) {
		g.Input = rep.Input
	}
	return g
}

// AfterTool asks the root's PostToolUse hooks.
func (c *childAgentHooks) AfterTool(ctx context.Context, call agent.ToolCall, res tool.Result, took time.Duration) string {
	if !c.l.hookFilter.Selects(protocol.HookPostToolUse, call.Name) {
		return ""
	}
	h := c.request(protocol.HookPostToolUse, call)
	h.Response = &protocol.ToolResponse{Content: clip(res.Content, maxHookResponse), IsError: res.IsError}
	h.DurationMS = took.Milliseconds()
	rep, _ := c.l.hook(ctx, h)
	return c.runHere(ctx, call, rep).Context
}

// Stop: a subagent's end is SubagentStop, which the root fires itself.
func (c *childAgentHooks) Stop(context.Context, string, bool) string { return "" }

// turn says a turn boundary is reached and waits for the parent's go; it
// returns at once when the parent is gone or ctx ends (the run then stops
// on its own).
func (l *parentLink) turn(ctx context.Context, n int) {
	if l == nil {
		return
	}
	id := protocol.NewTurnID()
	ch := make(chan struct{}, 1)
	l.mu.Lock()
	if l.gone {
		l.mu.Unlock()
		return
	}
	if l.turns == nil {
		l.turns = map[string]chan struct{}{}
	}
	l.turns[id] = ch
	l.mu.Unlock()
	l.out.send(protocol.Turn{ID: id, Turn: n})
	select {
	case <-ch:
	case <-ctx.Done():
		l.mu.Lock()
		delete(l.turns, id)
		l.mu.Unlock()
	}
}

// finalTurn says the boundary of an answer that ends the run is reached,
// and does not wait: the parent makes it durable while this child writes
// its result and exits, and returns the result only after (spawn's
// childTurns.wait). Its reply finds no one waiting and is dropped.
func (l *parentLink) finalTurn(n int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	gone := l.gone
	l.mu.Unlock()
	if !gone {
		l.out.send(protocol.Turn{ID: protocol.NewTurnID(), Turn: n, Final: true})
	}
}

// turnReply delivers the parent's go to the boundary that waits for it.
func (l *parentLink) turnReply(m protocol.TurnReply) {
	l.mu.Lock()
	ch := l.turns[m.ID]
	delete(l.turns, m.ID)
	l.mu.Unlock()
	if ch != nil {
		ch <- struct{}{}
	}
}
