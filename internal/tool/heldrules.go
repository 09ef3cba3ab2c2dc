package tool

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/trust"
)

// heldRule is a held-back allow rule, parsed.
type heldRule struct {
	rule Rule
	src  trust.HeldRule
}

// WithHeld returns a copy of p that knows the allow rules an untrusted
// project's settings hold back (settings.ProjectTrust.HeldAllow) and what
// else trusting it would grant, in brood's words (also:
// settings.ProjectTrust.Kinds). The rules allow nothing: a call only they
// would allow is asked as before, and its Decision names them (Held), so
// the refusal says so after the narrow route, with what brood trust would
// also grant. A rule that does not parse is left out.
func (p *Permissions) WithHeld(held []trust.HeldRule, also []string) *Permissions {
	if p == nil || len(held) == 0 {
		return p
	}
	q := *p
	q.held, q.heldAlso = nil, slices.Clone(also)
	for _, h := range held {
		if r, err := ParseRule(h.Rule); err == nil {
			q.held = append(q.held, heldRule{rule: r, src: h})
		}
	}
	return &q
}

// WithAskFrom returns a copy of p that knows which settings files name
// each ask rule, so that a refusal by one says where to remove it.
func (p *Permissions) WithAskFrom(from []trust.RuleFiles) *Permissions {
	if p == nil || len(from) == 0 {
		return p
	}
	q := *p
	q.askFrom = map[string][]string{}
	for _, f := range from {
		if r, err := ParseRule(f.Rule); err == nil {
			for _, file := range f.Files {
				if !slices.Contains(q.askFrom[r.String()], file) {
					q.askFrom[r.String()] = append(q.askFrom[r.String()], file)
				}
			}
		}
	}
	return &q
}

// workable is rules when, added to the allow rules, they would allow the
// command c; else the rule for exactly its line (a prefix rule does not
// cover an option that runs or writes: Bash(find:*) and find -exec). Any
// other call's rules are kept.
func (p *Permissions) workable(c call, rules []string) []string {
	if p.verifying || c.kind != subjectCommand || len(rules) == 0 {
		return rules
	}
	q := *p
	q.verifying, q.held = true, nil
	q.allow = slices.Clone(p.allow)
	for _, s := range rules {
		r, err := ParseRule(s)
		if err != nil {
			return rules
		}
		q.allow = append(q.allow, r)
	}
	if q.checkCall(c).Verdict == Allow {
		return rules
	}
	return []string{exactRule(c)}
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
