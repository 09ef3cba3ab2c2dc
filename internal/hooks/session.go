package hooks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/tool"
)

// Session fires the hooks of one root run: its common payload fields are
// fixed when it starts. A nil *Session fires nothing.
type Session struct {
	r      *Runner
	common Common
	// Background lists the subagents still running in the background (for
	// Stop's and SubagentStop's background_tasks); nil: none.
	Background func() []BackgroundTask
}

// DefaultEffort is the payload's effort level when the run asked for none.
const DefaultEffort = "default"

// NewSession returns a Session over r (nil when r has no hooks).
func NewSession(r *Runner, c Common) *Session {
	if r == nil {
		return nil
	}
	if c.Effort == nil {
		// Claude Code gives the effort on PreToolUse, PostToolUse, Stop
		// and SubagentStop always: with none asked for, brood sends none
		// and the provider's default applies.
		c.Effort = &Effort{Level: DefaultEffort}
	}
	return &Session{r: r, common: c}
}

func (s *Session) base(event string) Common {
	c := s.common
	c.HookEventName = event
	return c
}

func (s *Session) background() []BackgroundTask {
	if s.Background == nil {
		return []BackgroundTask{}
	}
	if b := s.Background(); b != nil {
		return b
	}
	return []BackgroundTask{}
}

// ErrStopped is returned when a hook said "continue": false.
var errStopped = errors.New("stopped by a hook")

// Start fires SessionStart (source startup or resume) and returns the
// context its hooks add for the model.
func (s *Session) Start(ctx context.Context, source string) (string, error) {
	if s == nil || !s.r.Has(SessionStart) {
		return "", nil
	}
	c := s.base(SessionStart)
	c.PromptID, c.PermissionMode, c.Effort = "", "", nil // as Claude Code's SessionStart
	res := s.r.Fire(ctx, SessionStart, source, SessionStartInput{Common: c, Source: source})
	if res.Stop {
		return "", stopErr(res.StopReason)
	}
	return strings.Join(res.Context, "\n\n"), nil
}

// Prompt fires UserPromptSubmit. A block is an error naming the hook's
// reason (the prompt is not sent); otherwise it returns the context its
// hooks add.
func (s *Session) Prompt(ctx context.Context, prompt string) (string, error) {
	if s == nil || !s.r.Has(UserPromptSubmit) {
		return "", nil
	}
	c := s.base(UserPromptSubmit)
	c.Effort = nil // as Claude Code's UserPromptSubmit
	res := s.r.Fire(ctx, UserPromptSubmit, "", UserPromptSubmitInput{Common: c, Prompt: prompt})
	switch {
	case res.Stop:
		return "", stopErr(res.StopReason)
	case res.Block:
		return "", errors.New("the prompt was blocked by a UserPromptSubmit hook: " + cmp.Or(res.Reason, "no reason given"))
	}
	return strings.Join(res.Context, "\n\n"), nil
}

func stopErr(reason string) error {
	if reason == "" {
		return errStopped
	}
	return errors.New("stopped by a hook: " + reason)
}

// BeforeTool implements agent.Hooks (PreToolUse).
func (s *Session) BeforeTool(ctx context.Context, c agent.ToolCall) agent.ToolGate {
	if !s.r.Has(PreToolUse) {
		return agent.ToolGate{}
	}
	return s.beforeTool(ctx, s.base(PreToolUse), c)
}

func (s *Session) beforeTool(ctx context.Context, common Common, c agent.ToolCall) agent.ToolGate {
	return gateOf(s.r.Fire(ctx, PreToolUse, c.Name, preInput(common, c)))
}

func preInput(common Common, c agent.ToolCall) PreToolUseInput {
	return PreToolUseInput{Common: common, ToolName: payloadToolName(c.Name), ToolInput: c.Input, ToolUseID: c.ID}
}

// gateOf is what PreToolUse's combined result means for the call.
func gateOf(res Result) agent.ToolGate {
	var g agent.ToolGate
	switch {
	case res.Block:
		g.Deny = "blocked by a PreToolUse hook: " + cmp.Or(res.Reason, "no reason given")
	case res.Stop:
		g.Deny = "stopped by a PreToolUse hook: " + cmp.Or(res.StopReason, "no reason given")
	case res.Permission == Deny:
		g.Deny = "denied by a PreToolUse hook: " + cmp.Or(res.PermissionReason, "no reason given")
	case res.Permission == Allow:
		g.Verdict = tool.HookAllow
	case res.Permission == Ask:
		g.Verdict = tool.HookAsk
	}
	if g.Deny == "" && len(res.UpdatedInput) > 0 && json.Valid(res.UpdatedInput) {
		g.Input = res.UpdatedInput
	}
	g.Context = strings.Join(res.Context, "\n\n")
	return g
}

// AfterTool implements agent.Hooks (PostToolUse): a block's reason and any
// additional context reach the model with the result.
func (s *Session) AfterTool(ctx context.Context, c agent.ToolCall, res tool.Result, took time.Duration) string {
	if !s.r.Has(PostToolUse) {
		return ""
	}
	return s.afterTool(ctx, s.base(PostToolUse), c, tool.HookResponse(c.Name, c.Input, res), took.Milliseconds())
}

func (s *Session) afterTool(ctx context.Context, common Common, c agent.ToolCall, resp any, ms int64) string {
	return afterContext(s.r.Fire(ctx, PostToolUse, c.Name, postInput(common, c, resp, ms)))
}

func postInput(common Common, c agent.ToolCall, resp any, ms int64) PostToolUseInput {
	return PostToolUseInput{
		Common: common, ToolName: payloadToolName(c.Name), ToolInput: c.Input, ToolUseID: c.ID,
		ToolResponse: resp, DurationMS: ms,
	}
}

// afterContext is what PostToolUse's combined result adds for the model:
// a block's reason and any additional context.
func afterContext(out Result) string {
	var parts []string
	if out.Block {
		parts = append(parts, "[PostToolUse hook] "+cmp.Or(out.Reason, "the hook objected to this result"))
	}
	parts = append(parts, out.Context...)
	return strings.Join(parts, "\n\n")
}

// Stop implements agent.Hooks (Stop): a block's reason keeps the run going.
func (s *Session) Stop(ctx context.Context, last string, active bool) string {
	if !s.r.Has(Stop) {
		return ""
	}
	res := s.r.Fire(ctx, Stop, "", StopInput{
		Common: s.base(Stop), StopHookActive: active, LastAssistantMessage: last,
		BackgroundTasks: s.background(), SessionCrons: []any{},
	})
	if res.Block && !res.Stop {
		return cmp.Or(res.Reason, "a Stop hook asked you to continue")
	}
	return ""
}

// AgentHooks returns s as the agent loop's hooks, or nil when it would
// fire nothing around tool calls or at the end (so the loop skips them).
func (s *Session) AgentHooks() agent.Hooks {
	if s == nil || !(s.r.Has(PreToolUse) || s.r.Has(PostToolUse) || s.r.Has(Stop)) {
		return nil
	}
	return s
}
