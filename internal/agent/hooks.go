package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/broodhq/brood/internal/tool"
)

// Hooks is asked around every tool call and when the run would end (the
// user's hooks, package hooks; nil: none). The loop stays ignorant of what
// they run.
type Hooks interface {
	// BeforeTool may refuse a call, replace its input, or set the verdict
	// the permission layer starts from (allow: no prompt; ask: a prompt
	// even where a rule allows). Deny rules and the read-only scope still
	// hold whatever it says.
	BeforeTool(ctx context.Context, c ToolCall) ToolGate
	// AfterTool returns text to add to the result the model sees (a hook's
	// feedback or additional context), or "".
	AfterTool(ctx context.Context, c ToolCall, res tool.Result, took time.Duration) string
	// Stop is asked when the model answers without a tool call; a non-empty
	// reply goes back to the model as the reason to continue. active is
	// set when the run already continued because of a Stop hook.
	Stop(ctx context.Context, last string, active bool) string
}

// ToolCall is one call as hooks see it.
type ToolCall struct {
	Name  string
	ID    string
	Input json.RawMessage
}

// ToolGate is what BeforeTool decided.
type ToolGate struct {
	// Deny, when set, refuses the call; it is what the model is told.
	Deny string
	// Input replaces the call's input when set.
	Input json.RawMessage
	// Verdict is "", tool.HookAllow or tool.HookAsk.
	Verdict string
	// Context is added to the result the model sees.
	Context string
}

// runHooked runs one call between its hooks. ran is the input the tool ran
// with when a hook replaced the model's (nil otherwise).
func (r *run) runHooked(ctx context.Context, env *tool.Env, call ToolCall) (res tool.Result, ran json.RawMessage) {
	h := r.cfg.Hooks
	g := h.BeforeTool(ctx, call)
	if g.Deny != "" {
		return tool.Errorf("%s", g.Deny), nil
	}
	if len(g.Input) > 0 && !bytes.Equal(g.Input, call.Input) {
		call.Input, ran = g.Input, g.Input
	}
	if g.Verdict != "" {
		env = env.WithHookVerdict(g.Verdict)
	}
	start := time.Now()
	res = r.cfg.Tools.Run(ctx, env, call.Name, call.Input)
	extra := h.AfterTool(ctx, call, res, time.Since(start))
	for _, s := range []string{g.Context, extra} {
		if s != "" {
			res.Content += "\n\n" + s
		}
	}
	return res, ran
}
