package tool

// Verdicts a PreToolUse hook may hand the permission check.
const (
	// HookAllow skips the prompt an ask would raise; deny rules, the
	// read-only scope and the tool set still hold.
	HookAllow = "allow"
	// HookAsk raises a prompt even where a rule allows the call (and, with
	// no one to answer it, refuses the call).
	HookAsk = "ask"
)

// WithHookVerdict is a copy of env for its call with a hook's verdict on
// it (Call.HookVerdict).
func (env *Env) WithHookVerdict(v string) *Env {
	var c Call
	if env != nil && env.Call != nil {
		c = *env.Call
	}
	c.HookVerdict = v
	return env.ForCall(&c)
}

// hookAdjust applies the hook verdict of env's call to the rules'
// decision: it can turn an ask into an allow or an allow into an ask,
// never a deny into anything else.
func hookAdjust(env *Env, d Decision) Decision {
	v := ""
	if env.Call != nil {
		v = env.Call.HookVerdict
	}
	switch {
	case v == HookAllow && d.Verdict == Ask:
		d.Verdict, d.Reason = Allow, "allowed by a PreToolUse hook"
	case v == HookAsk && d.Verdict == Allow:
		d.Verdict, d.Reason, d.Rule, d.Suggest = Ask, "a PreToolUse hook asks for approval", "", nil
	}
	return d
}
