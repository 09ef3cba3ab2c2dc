package tool

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/trust"
)

// heldRule is a held-back allow rule, parsed.
type heldRule struct {
	rule Rule
	src  trust.HeldRule
}

// WithHeld returns a copy of p that knows the allow rules an untrusted
// project's settings hold back (settings.ProjectTrust.HeldAllow). They
// allow nothing: a call only they would allow is asked as before, and its
// Decision names them (Held), so the refusal says to trust the project
// instead of adding a rule to a file that cannot help. A rule that does
// not parse is left out.
func (p *Permissions) WithHeld(held []trust.HeldRule) *Permissions {
	if p == nil || len(held) == 0 {
		return p
	}
	q := *p
	q.held = nil
	for _, h := range held {
		if r, err := ParseRule(h.Rule); err == nil {
			q.held = append(q.held, heldRule{rule: r, src: h})
		}
	}
	return &q
}

// heldFor lists the held-back rules that, added to the allow rules, would
// allow the call c (asked without them): nil when they would not.
func (p *Permissions) heldFor(tool string, readOnly bool, input json.RawMessage, workspace string) []trust.HeldRule {
	q := *p
	q.held = nil
	q.allow = slices.Clone(p.allow)
	for _, h := range p.held {
		q.allow = append(q.allow, h.rule)
	}
	if q.check(tool, readOnly, input, workspace).Verdict != Allow {
		return nil
	}
	c := newCall(tool, readOnly, input, workspace)
	var out []trust.HeldRule
	for _, h := range p.held {
		if _, ok := firstMatch([]Rule{h.rule}, c, true); ok {
			out = append(out, h.src)
		}
	}
	return out
}

// AllowingConfigWrites returns a copy of p under which tools may write
// brood's and Claude Code's configuration (.brood/, .claude/,
// settings.local.*) as the rules allow: for the user's own
// agents.allow_config_changes, never for a project's.
func (p *Permissions) AllowingConfigWrites() *Permissions {
	if p == nil {
		return nil
	}
	q := *p
	q.configWrites = true
	return &q
}

// NewPermissions parses a mode and three rule lists. Every bad rule is
// reported, not just the first, so a settings file can be fixed in one go.
func NewPermissions(mode string, allow, deny, ask []string) (*Permissions, error) {
	m, err := ParseMode(mode)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	p := &Permissions{mode: m}
	parse := func(list string, in []string) []Rule {
		var out []Rule
		for _, s := range in {
			r, err := ParseRule(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", list, err))
				continue
			}
			out = append(out, r)
		}
		return out
	}
	p.allow = parse("allow", allow)
	p.deny = parse("deny", deny)
	p.ask = parse("ask", ask)
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return p, nil
}

func joinErrors(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}

// Mode returns the permission mode.
func (p *Permissions) Mode() Mode { return p.mode }

// heldAdvice says that the untrusted project's own allow rules would allow
// the call, and that trusting the project is the fix.
func heldAdvice(held []trust.HeldRule) string {
	var rules, files []string
	for _, h := range held {
		rules = append(rules, fmt.Sprintf("%q", h.Rule))
		if h.File != "" && !slices.Contains(files, h.File) {
			files = append(files, h.File)
		}
	}
	noun, verb := "rule", "is"
	if len(rules) > 1 {
		noun, verb = "rules", "are"
	}
	where := ""
	if len(files) > 0 {
		where = " in " + strings.Join(files, ", ")
	}
	return fmt.Sprintf("the project's allow %s %s%s would allow it but %s held back until you trust the project: run brood trust (or pass --trust-project for one run)",
		noun, strings.Join(rules, " and "), where, verb)
}

// commandPrefix is the narrowest useful prefix of a simple command's words
// for a rule, as Claude Code proposes it: the program with its subcommand
// ("git commit", "npm run test", "uv run pytest"), an interpreter with its
// module or script ("python3 -m pytest", "node build.js"), else the
// program. ("python3:*" would allow any Python program.)
func commandPrefix(f []string) string {
	prog := f[0]
	arg := func(i int) bool { return len(f) > i && f[i] != "" && !strings.HasPrefix(f[i], "-") }
	switch {
	case interpreters()[strings.TrimRight(prog, "0123456789.")] && len(f) > 2 && f[1] == "-m" && arg(2):
		return prog + " -m " + f[2]
	case interpreters()[strings.TrimRight(prog, "0123456789.")] && arg(1):
		return prog + " " + f[1]
	case subcommandTools()[prog] && arg(1):
		if (f[1] == "run" || f[1] == "exec" || f[1] == "x") && arg(2) {
			return prog + " " + f[1] + " " + f[2]
		}
		return prog + " " + f[1]
	}
	return prog
}

// interpreters run the program their first argument names (less a
// version: python3.12 is python).
var interpreters = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"python": true, "node": true, "ruby": true, "perl": true, "php": true, "bash": true, "sh": true, "zsh": true}
})
