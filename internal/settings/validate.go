package settings

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// validate checks the resolved settings: a value that makes no sense (a
// heartbeat under 1s, a negative depth) is an error naming the key and
// where it was set; a value out of the usual range is a warning.
func validate(s Settings, origins map[string]Origin) ([]Warning, error) {
	where := func(key string) string {
		if o, ok := origins[key]; ok && o.Source != "default" {
			return " (" + o.String() + ")"
		}
		return ""
	}
	fail := func(key, format string, args ...any) error {
		return fmt.Errorf("setting %s%s: %s", key, where(key), fmt.Sprintf(format, args...))
	}
	p := s.Pool
	switch {
	case s.MaxSubagentDepth < 0:
		return nil, fail("maxSubagentDepth", "%d is negative: use 0 to turn delegation off, 1 (the default) to let the root delegate", s.MaxSubagentDepth)
	case s.MaxTurns < 0:
		return nil, fail("max_turns", "%d is negative: use a positive turn cap (default 50)", s.MaxTurns)
	case s.MaxTokens < 0:
		return nil, fail("max_tokens", "%d is negative", s.MaxTokens)
	case s.TokenBudget < 0:
		return nil, fail("token_budget", "%d is negative (0 means no budget)", s.TokenBudget)
	case s.FixAttempts < 0:
		return nil, fail("fix_attempts", "%d is negative (default 3)", s.FixAttempts)
	case p.HeartbeatTimeout.Duration < time.Second:
		return nil, fail("pool.heartbeat_timeout", "%s is under 1s: the lifeguard would kill every child before its first heartbeat; use at least 1s (default 60s)", p.HeartbeatTimeout.Duration)
	case p.PingInterval.Duration <= 0:
		return nil, fail("pool.ping_interval", "%s: the heartbeat period must be positive (default 5s)", p.PingInterval.Duration)
	case p.PingInterval.Duration >= p.HeartbeatTimeout.Duration:
		return nil, fail("pool.ping_interval", "%s is not shorter than pool.heartbeat_timeout (%s): every child would be killed between two heartbeats", p.PingInterval.Duration, p.HeartbeatTimeout.Duration)
	case p.Concurrency < 1:
		return nil, fail("pool.concurrency", "%d: at least one child must be able to run (default 5)", p.Concurrency)
	case p.NestedConcurrency < 1:
		return nil, fail("pool.nested_concurrency", "%d: at least one child must be able to run (default 2)", p.NestedConcurrency)
	case p.Warm < 0 || p.Warm > MaxWarm:
		return nil, fail("pool.warm", "%d: between 0 (no warm children, the default) and %d", p.Warm, MaxWarm)
	case p.Timeout.Duration < time.Second:
		return nil, fail("pool.timeout", "%s is under 1s: no child could finish (default 30m)", p.Timeout.Duration)
	case p.KillGrace.Duration < 0:
		return nil, fail("pool.kill_grace", "%s is negative (default 3s)", p.KillGrace.Duration)
	case s.Bash.Timeout.Duration < 0:
		return nil, fail("bash.timeout", "%s is negative (default 2m)", s.Bash.Timeout.Duration)
	case s.Bash.OutputLimit < 0:
		return nil, fail("bash.output_limit", "%d is negative", s.Bash.OutputLimit)
	case s.ProjectFiles.MaxBytes < 0:
		return nil, fail("project_files.max_bytes", "%d is negative (default 40000)", s.ProjectFiles.MaxBytes)
	case s.ProjectFiles.ChildMaxBytes < 0:
		return nil, fail("project_files.child_max_bytes", "%d is negative (default 40000)", s.ProjectFiles.ChildMaxBytes)
	case s.ProjectFiles.Children != "" && !slices.Contains([]string{ChildrenWriters, ChildrenAll, ChildrenNone}, s.ProjectFiles.Children):
		return nil, fail("project_files.children", "%q is not one of writers, all, none (default writers)", s.ProjectFiles.Children)
	case s.Results.InlineLimit < 0:
		return nil, fail("results.inline_limit", "%d is negative", s.Results.InlineLimit)
	case s.Store != "" && checkStoreURL(s.Store) != nil:
		return nil, fail("store", "%v", checkStoreURL(s.Store))
	case s.Effort != "" && !slices.Contains([]string{"low", "medium", "high", "xhigh", "max"}, s.Effort):
		return nil, fail("effort", "%q is not one of low, medium, high, xhigh, max", s.Effort)
	case s.Permissions.Mode != "" && !slices.Contains(Modes(), s.Permissions.Mode):
		return nil, fail("permissions.mode", "%q is not one of %s", s.Permissions.Mode, strings.Join(Modes(), ", "))
	}
	if err := checkGuardrails(s.Guardrails, fail); err != nil {
		return nil, err
	}
	if _, err := s.Limits.Child(); err != nil {
		key, _, _ := strings.Cut(err.Error(), ":")
		return nil, fail(key, "%s", strings.TrimPrefix(err.Error(), key+": "))
	}
	for key, d := range p.Timeouts {
		if d.Duration < time.Second {
			return nil, fail("pool.timeouts."+key, "%s is under 1s: no %s child could finish", d.Duration, key)
		}
	}
	var w []Warning
	warn := func(key, format string, args ...any) {
		o := origins[key]
		w = append(w, Warning{File: o.File, Line: o.Line, Key: key, Msg: fmt.Sprintf("%s: ", key) + fmt.Sprintf(format, args...)})
	}
	if s.MaxSubagentDepth > 4 {
		warn("maxSubagentDepth", "%d is deep: each level multiplies processes and cost (1 to 3 is usual)", s.MaxSubagentDepth)
	}
	if p.Concurrency > 64 {
		warn("pool.concurrency", "%d children at once is more than one machine usually holds", p.Concurrency)
	}
	if p.HeartbeatTimeout.Duration > time.Hour {
		warn("pool.heartbeat_timeout", "%s: a hung child would go unnoticed that long", p.HeartbeatTimeout.Duration)
	}
	if s.MaxTurns > 1000 {
		warn("max_turns", "%d turns is far past what one run needs (default 50)", s.MaxTurns)
	}
	return w, nil
}

// checkGuardrails refuses a guardrail policy that is neither reject nor warn.
func checkGuardrails(g Guardrails, fail func(key, format string, args ...any) error) error {
	for _, x := range g.fields() {
		if v := *x.v; v != "" && v != "reject" && v != "warn" {
			return fail(x.key, "%q is not a guardrail policy: use reject or warn", v)
		}
	}
	return nil
}
