package tool

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// onlyRules are the tool specifiers of an untrusted project agent's
// definition (`tools: Bash(python3:*)`), parsed: they allow nothing, they
// narrow the tool each names (WithOnly).
type onlyRules struct {
	rules []Rule
	// why ends the refusal of a call outside them: whose they are.
	why string
}

// WithOnly returns a copy of p under which a call of a tool that rules
// name must be one of them covers (as an allow rule would cover the whole
// call), and is then decided by p's own rules and mode as before: the
// specifiers only narrow the tool, they allow nothing. why says whose the
// rules are, for the refusal. A rule that does not parse is an error.
func (p *Permissions) WithOnly(rules []string, why string) (*Permissions, error) {
	if p == nil || len(rules) == 0 {
		return p, nil
	}
	q := *p
	q.only = &onlyRules{why: why}
	for _, s := range rules {
		r, err := ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("agent tool specifier: %w", err)
		}
		r.Tool = CanonicalName(r.Tool)
		q.only.rules = append(q.only.rules, r)
	}
	return &q, nil
}

// outsideOnly refuses a call of a narrowed tool that no specifier covers:
// every simple command of a Bash line must be covered and the line must be
// one a prefix rule can approve at all; a path must be covered as written
// and as the file it really is.
func (p *Permissions) outsideOnly(tool string, readOnly bool, input json.RawMessage, workspace string) (Decision, bool) {
	if p.only == nil {
		return Decision{}, false
	}
	var mine []Rule
	for _, r := range p.only.rules {
		if r.Tool == tool {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		return Decision{}, false
	}
	c := newCall(tool, readOnly, input, workspace)
	_, within := firstMatch(mine, c, false)
	if within && c.kind == subjectCommand && c.unsafe != "" {
		within = false
	}
	if within && c.kind == subjectPath {
		if real := ResolveLinks(c.subject); real != c.subject {
			c2 := c
			c2.subject, c2.workspace = real, ResolveLinks(c.workspace)
			_, within = firstMatch(mine, c2, false)
		}
	}
	if within {
		return Decision{}, false
	}
	names := make([]string, len(mine))
	for i, r := range mine {
		names[i] = r.String()
	}
	slices.Sort(names)
	return Decision{Verdict: Deny, Subject: c.subject,
		Reason: fmt.Sprintf("the agent's definition limits %s to %s%s", tool, strings.Join(slices.Compact(names), ", "), p.only.why)}, true
}
