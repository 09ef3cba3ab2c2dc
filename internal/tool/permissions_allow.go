package tool

import (
	"fmt"
	"path/filepath"
	"strings"
)

// byAllowRules decides c by the allow rules (the user's and the read-only
// set), when they decide it: a line only a rule for all of Bash can
// approve, a covered command whose options write or run (asked, naming the
// option), a covered command that writes a file no rule approves. It
// returns the files the line writes that no rule approves, for the mode's
// ask.
func (p *Permissions) byAllowRules(c call, d Decision) (Decision, []string, bool) {
	allow := p.allow
	if c.kind == subjectCommand && p.mode != ModePlan {
		allow = append(append([]Rule(nil), p.allow...), p.builtinAllow()...)
	}
	if c.unsafe != "" {
		// A prefix rule such as Bash(git status:*) cannot approve it; only
		// a rule for all of Bash (or a human, or bypassPermissions) can.
		allow = nil
		for _, r := range p.allow {
			if r.Specifier == "" {
				allow = append(allow, r)
			}
		}
		if len(allow) == 0 && p.mode != ModeBypass {
			d.Verdict, d.Reason = Ask, "no prefix rule can approve this command: "+c.unsafe
			d.Suggest = []string{exactRule(c)}
			return p.dontAsk(d), nil, true
		}
	}
	r, ok := firstMatch(allow, c, false)
	if ok && p.mode != ModeBypass {
		if rule, rk, risky := optionRisk(allow, c); risky {
			// The rule names the program, not what this option makes it do.
			d.Verdict, d.Reason = Ask, rk.explain(rule)
			d.Suggest = []string{exactRule(c)}
			return p.dontAsk(d), nil, true
		}
	}
	missing := p.unapprovedWrites(c)
	if ok && (len(missing) == 0 || r.Specifier == "") {
		// A rule for all of Bash approves its redirections too, as before;
		// a prefix rule needs each written file approved as a write.
		d.Verdict, d.Rule, d.Reason = Allow, r.String(), ruleReason(r)
		if r.builtin {
			d.Rule = ""
		}
		return d, nil, true
	}
	if ok {
		d.Verdict, d.Reason = Ask, fmt.Sprintf("allow rule %q covers the command but not the file it writes (%s)", r.String(), strings.Join(missing, ", "))
		if r.builtin {
			d.Reason = fmt.Sprintf("%s is read-only, but it writes %s", strings.TrimSuffix(r.Specifier, ":*"), strings.Join(missing, ", "))
		}
		d.Suggest = p.writeRules(c, missing)
		return p.dontAsk(d), nil, true
	}
	return d, missing, false
}

// unapprovedWrites lists the files c's redirections write that neither an
// allow rule for Write or Edit, nor acceptEdits inside the workspace, nor
// bypassPermissions approves.
func (p *Permissions) unapprovedWrites(c call) []string {
	var out []string
	for i, path := range c.writes {
		if c.chdir && i < len(c.rawWrites) && !filepath.IsAbs(c.rawWrites[i]) && !strings.HasPrefix(c.rawWrites[i], "~") && p.mode != ModeBypass {
			// After a cd, the file is not where a Write rule would judge it.
			out = append(out, path)
			continue
		}
		if p.mode == ModeBypass || (p.mode == ModeAcceptEdits && inside(c.workspace, path)) {
			continue
		}
		w := call{tool: "Write", kind: subjectPath, subject: path, workspace: c.workspace}
		if _, ok := firstMatch(p.allow, w, false); ok {
			continue
		}
		out = append(out, path)
	}
	return out
}

// writeRules suggests a Write rule for each of the paths.
func (p *Permissions) writeRules(c call, paths []string) []string {
	var out []string
	for _, path := range paths {
		out = append(out, p.suggestRules(call{tool: "Write", kind: subjectPath, subject: path, workspace: c.workspace})...)
	}
	return out
}

// exactLine finds an allow rule that names the whole command line exactly
// (no wildcard): the user approved that line as written.
func exactLine(rules []Rule, c call) (Rule, bool) {
	if c.kind != subjectCommand || c.subject == "" {
		return Rule{}, false
	}
	line := strings.Join(strings.Fields(c.subject), " ")
	for _, r := range rules {
		if r.Tool == c.tool && r.Specifier != "" && !strings.Contains(r.Specifier, "*") &&
			strings.Join(strings.Fields(r.Specifier), " ") == line {
			return r, true
		}
	}
	return Rule{}, false
}

// exactRule is the rule that approves exactly c's command line, or all of
// Bash when the line cannot be written as a rule that parses back to it.
func exactRule(c call) string {
	line := strings.Join(strings.Fields(c.subject), " ")
	r := "Bash(" + line + ")"
	if parsed, err := ParseRule(r); err == nil && !strings.Contains(line, "*") {
		if _, ok := exactLine([]Rule{parsed}, c); ok {
			return r
		}
	}
	return "Bash"
}
