package tool

import "context"

// Verdicts a PreToolUse hook may hand the permission check.
const (
	// HookAllow skips the prompt an ask would raise; deny rules, the
	// read-only scope and the tool set still hold.
	HookAllow = "allow"
	// HookAsk raises a prompt even where a rule allows the call (and, with
	// no one to answer it, refuses the call).
	HookAsk = "ask"
)

type hookVerdictKey struct{}

// WithHookVerdict returns ctx carrying a hook's verdict for the call run
// under it.
func WithHookVerdict(ctx context.Context, v string) context.Context {
	return context.WithValue(ctx, hookVerdictKey{}, v)
}

// hookAdjust applies ctx's hook verdict to the rules' decision: it can
// turn an ask into an allow or an allow into an ask, never a deny into
// anything else.
func hookAdjust(ctx context.Context, d Decision) Decision {
	v, _ := ctx.Value(hookVerdictKey{}).(string)
	switch {
	case v == HookAllow && d.Verdict == Ask:
		d.Verdict, d.Reason = Allow, "allowed by a PreToolUse hook"
	case v == HookAsk && d.Verdict == Allow:
		d.Verdict, d.Reason, d.Rule, d.Suggest = Ask, "a PreToolUse hook asks for approval", "", nil
	}
	return d
}
