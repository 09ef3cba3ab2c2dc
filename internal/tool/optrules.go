package tool

import (
	"fmt"
	"strings"
)

// maxWrapDepth bounds how many wrappers (env timeout nice ...) the option
// check looks through before it gives up and asks.
const maxWrapDepth = 4

// optionRisk finds the first command of the Bash call c that the allow
// rules cover by name only: every covering prefix or wildcard rule leaves
// an option (or a word) after its prefix that writes a file or runs a
// program. A rule for all of Bash, or one naming the command exactly,
// covers whatever it has. It returns the rule and the risk for the ask.
func optionRisk(allow []Rule, c call) (Rule, risk, bool) {
	if c.kind != subjectCommand {
		return Rule{}, risk{}, false
	}
	for _, r := range allow {
		if r.Tool == c.tool && r.Specifier == "" {
			return Rule{}, risk{}, false
		}
	}
	for _, cmd := range c.cmds {
		if r, rk, bad := cmdRisk(allow, c, cmd.part, cmd.args, 0); bad {
			return r, rk, true
		}
	}
	return Rule{}, risk{}, false
}

// cmdRisk judges one command (part as written, args as its program sees
// them) under each rule that covers it: one rule that covers all it does
// is enough.
func cmdRisk(allow []Rule, c call, part string, args []shWord, depth int) (Rule, risk, bool) {
	var first Rule
	var firstRisk risk
	found := false
	for _, r := range allow {
		if !r.coversPart(c, part) {
			continue
		}
		n, exact := prefixWords(r.Specifier)
		if exact {
			return Rule{}, risk{}, false
		}
		rk, bad := risksAfter(allow, c, args, n, depth)
		if !bad && r.builtin && len(args) > 0 && programName(args[0].text) == "git" {
			rk, bad = builtinGitRisk(c)
		}
		if !bad && len(args) > 0 && programName(args[0].text) == "go" {
			rk, bad = goCdRisk(c, args)
		}
		if !bad {
			return Rule{}, risk{}, false
		}
		if !found {
			first, firstRisk, found = r, rk, true
		}
	}
	return first, firstRisk, found
}

// risksAfter is the first risk of args at or after word n (the words
// before n are the rule's own); a wrapper's command must be covered in its
// own right, or (when the rule names it) be free of risks after the prefix.
func risksAfter(allow []Rule, c call, args []shWord, n, depth int) (risk, bool) {
	a := analyse(args, c.workspace)
	for _, rk := range a.risks {
		if rk.at >= n && !rk.guardOnly {
			return rk, true
		}
	}
	if a.inner == nil {
		return risk{}, false
	}
	wrapper := programName(args[0].text)
	if depth >= maxWrapDepth {
		return risk{at: 0, opt: wrapper, why: "wraps commands too deeply for brood to check"}, true
	}
	if a.innerAt < n {
		return risksAfter(allow, c, a.inner, n-a.innerAt, depth+1)
	}
	inner := strings.Join(texts(a.inner), " ")
	if _, rk, bad := cmdRisk(allow, c, inner, a.inner, depth+1); bad {
		return rk, true
	}
	if _, ok := firstMatch(allow, call{tool: c.tool, kind: c.kind, subject: inner, parts: []string{inner}, workspace: c.workspace}, false); !ok {
		return risk{at: a.innerAt, opt: wrapper, why: "runs another program (" + inner + "), which no allow rule covers"}, true
	}
	return risk{}, false
}

// prefixWords is how many words of a command a Bash specifier names
// ("git log:*": 2; "npm run test*": 2, the words before the one with the
// wildcard), leading VAR=value words not counted; exact is set for a
// specifier without a wildcard, which names one whole command.
func prefixWords(spec string) (n int, exact bool) {
	p, prefix := strings.CutSuffix(spec, ":*")
	if !prefix && !strings.Contains(spec, "*") {
		return 0, true
	}
	words := strings.Fields(p)
	if !prefix {
		for i, w := range words {
			if strings.Contains(w, "*") {
				words = words[:i]
				break
			}
		}
	}
	for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "=") && !strings.HasPrefix(words[0], "-") {
		words = words[1:]
	}
	return len(words), false
}

// explain is the reason an ask gives for a risk: the rule, the option,
// and what it does.
func (rk risk) explain(r Rule) string {
	s := fmt.Sprintf("allow rule %q covers the command but not %s, which %s", r.String(), rk.quotedOpt(), rk.why)
	if r.builtin {
		s = fmt.Sprintf("%s is a read-only command, but not with %s, which %s", strings.TrimSuffix(r.Specifier, ":*"), rk.quotedOpt(), rk.why)
	}
	if rk.target != "" {
		s += " (" + rk.target + ")"
	}
	return s + "; a prefix rule covers only options known not to write files or run programs"
}

func (rk risk) quotedOpt() string {
	if rk.why == spelt {
		return fmt.Sprintf("%q", rk.opt)
	}
	return rk.opt
}

// builtinGitRisk is why the read-only set does not cover a git command in
// c: run in a repository whose configuration can name programs
// (gitplain.go), the workspace's or one a cd in the line leads to.
func builtinGitRisk(c call) (risk, bool) {
	dirs, ok := cdTargets(c)
	if !ok {
		return risk{opt: "cd", why: "makes git run in a directory brood cannot check, whose repository's configuration could name programs git runs"}, true
	}
	for _, d := range append([]string{c.workspace}, dirs...) {
		if !plainGitRepo(d) {
			return risk{opt: "the repository's configuration", why: "holds keys that can name programs git runs (core.fsmonitor, a diff driver, an alias, an include ...), or brood cannot read it"}, true
		}
	}
	return risk{}, false
}

// cdTargets are the directories the line's cd commands lead to, each
// resolved against the one before; ok is unset when one is not a literal
// directory inside the workspace (cd -, cd with no argument, pushd, popd,
// a computed path).
func cdTargets(c call) ([]string, bool) {
	var out []string
	cur := c.workspace
	for _, cmd := range c.cmds {
		args := cmd.args
		for len(args) > 0 && (args[0].text == "command" || args[0].text == "builtin") {
			args = args[1:]
		}
		if !changesDir(args) {
			continue
		}
		i := 1
		for i < len(args) && args[i].lit && strings.HasPrefix(args[i].text, "-") && args[i].text != "-" {
			i++
		}
		if programName(args[0].text) != "cd" || i != len(args)-1 || !args[i].lit || args[i].text == "-" {
			return nil, false
		}
		cur = resolvePath(cur, args[i].text)
		if !inside(c.workspace, cur) {
			return nil, false
		}
		out = append(out, cur)
	}
	return out, true
}
