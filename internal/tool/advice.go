package tool

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/trust"
)

// A refusal with no one to ask (brood -p, a subagent) ends with advice the
// model relays and the user acts on: it grants the narrowest thing, in the
// narrowest place, and never a broad rule a hostile repository or child
// would want the user to add (docs/permissions.md, "What a refusal
// suggests"). internal/guard/refusal.go and
// internal/engine/temporal/advice.go read these shapes: keep them in step.

// UserSettingsFile is where a refusal's advice puts an allow rule: the
// user's own settings, which need no trust.
const UserSettingsFile = "~/.config/brood/settings.toml"

// LocalSettingsFile is where a refusal's advice puts a rule that names a
// program of the repository's (./build.sh, python3 tools/gen.py): this
// project's own file, never every project's.
const LocalSettingsFile = ".brood/settings.local.toml"

// localCaveat says when LocalSettingsFile applies (docs/trust.md,
// "Personal files").
const localCaveat = " (this project only: edited by hand, it needs brood trust)"

// ruleScope is where a suggested rule may go.
type ruleScope int

const (
	scopeUser  ruleScope = iota // the user's settings: any project
	scopeLocal                  // the project's own local file: it names a repository program
	scopeNone                   // nowhere: it would allow far more than the call
)

// RefusalAdvice is what a refusal of an asked call says after "no one is
// here to give it" (the rule to add and where, or to approve it when
// asked), from the parent's own Decision: "" for a call d does not ask
// about, or one with no rule to change. The parent judging a child's
// record of a refusal says this, never the record's words.
func RefusalAdvice(d Decision, dir string) string {
	switch {
	case d.Verdict != Ask, len(d.Suggest) == 0 && d.Rule == "":
		return ""
	case len(d.Suggest) == 0:
		return askAdvice(d.Rule, d.RuleFiles)
	}
	return adviceFor(d, dir)
}

// adviceFor is what follows "no one is here to give it" in the refusal
// of an asked call with suggestions: the narrow route first, then, when
// the untrusted project's own allow rules would allow the call, that
// they are held back and what else trusting the project grants.
func adviceFor(d Decision, dir string) string {
	out := narrowAdvice(d.Suggest, d.Subject, dir)
	if len(d.Held) > 0 {
		out += "; " + heldAdvice(d.Held, d.HeldAlso)
	}
	return out
}

// narrowAdvice names the rules to add and where, or, when a rule would
// allow far more than the call, says to approve it when asked or to allow
// the exact command for one run.
func narrowAdvice(rules []string, subject, dir string) string {
	scope, broad := scopeUser, ""
	for _, r := range rules {
		s := scopeOf(r, dir)
		if s > scope {
			scope = s
		}
		if s == scopeNone && broad == "" {
			broad = broadName(r)
		}
	}
	if scope == scopeNone {
		out := fmt.Sprintf("no rule to keep is suggested (one for %s would allow far more than this call): approve the call when asked (run brood without -p)", broad)
		if exact := exactCommandRule(subject); exact != "" {
			out += ", or pass --allow " + shellQuote(exact) + " for one run"
		}
		return out
	}
	quoted, flags := make([]string, len(rules)), make([]string, len(rules))
	for i, r := range rules {
		quoted[i], flags[i] = fmt.Sprintf("%q", r), "--allow "+shellQuote(r)
	}
	where := UserSettingsFile
	if scope == scopeLocal {
		where = LocalSettingsFile + localCaveat
	}
	return fmt.Sprintf("to allow it add %s to [permissions] allow in %s, or pass %s", strings.Join(quoted, " and "), where, strings.Join(flags, " "))
}

// broadName names what the rule r that scopeOf puts nowhere is for: its
// program, quoted, or all of Bash.
func broadName(r string) string {
	if rule, err := ParseRule(r); err == nil {
		if f := strings.Fields(strings.TrimSuffix(rule.Specifier, ":*")); len(f) > 0 && rule.Specifier != "*" {
			return fmt.Sprintf("%q", f[0])
		}
	}
	return "all of Bash"
}

// exactCommandRule is the rule that allows exactly the command line
// subject, or "" when no rule can say it (a "*" would be a wildcard).
func exactCommandRule(subject string) string {
	line := strings.Join(strings.Fields(subject), " ")
	if line == "" || strings.Contains(line, "*") {
		return ""
	}
	r := "Bash(" + line + ")"
	if parsed, err := ParseRule(r); err != nil || parsed.Specifier != line {
		return ""
	}
	return r
}

// shellQuote quotes s for a POSIX shell, as the user pastes it.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// scopeOf says where the suggested rule r may go: nowhere when it names
// only an interpreter, shell or wrapper (any program), a program that runs
// code an argument or option names (advicecode.go), a bare file mover
// (mv, cp, rm, chmod: any file), all of Bash, or an exact line that runs
// code its words do not show; the project's local file when it names a
// program of the repository's; else the user's file.
func scopeOf(r string, dir string) ruleScope {
	rule, err := ParseRule(r)
	if err != nil {
		return scopeNone
	}
	if rule.Tool != "Bash" {
		return scopeUser
	}
	spec, prefix := strings.CutSuffix(rule.Specifier, ":*")
	words := strings.Fields(spec)
	if len(words) == 0 || spec == "*" || !prefix && lineRunsCode(spec, dir) || prefix && prefixRunsCode(spec) {
		return scopeNone
	}
	return wordsScope(words, prefix, dir)
}

// interpName is the program a command word names, less its directory and
// a version (python3.12 is python).
func interpName(word string) string {
	return strings.TrimRight(filepath.Base(word), "0123456789.")
}

// isInterpreter reports whether prog (programName) runs the program its
// arguments give.
func isInterpreter(prog string) bool { return interpreters()[prog] }

// repoPath reports whether the command word w names a file of the
// repository: a relative path (./build.sh, tools/gen.py; an interpreter's
// script also build.js), or an absolute one inside dir.
func repoPath(w, dir string, script bool) bool {
	switch {
	case strings.HasPrefix(w, "-") || strings.HasPrefix(w, "~") || strings.HasPrefix(w, "$"):
		return false
	case filepath.IsAbs(w):
		return inside(dir, filepath.Clean(w))
	case !staysInside(w):
		return false // ../../tmp/x.py: a file of another directory
	}
	return strings.Contains(w, "/") || script && strings.Contains(w, ".")
}

// staysInside reports whether the relative path w stays below the
// directory it is read in (no ".." leaves it).
func staysInside(w string) bool {
	c := filepath.Clean(w)
	return c != ".." && !strings.HasPrefix(c, "../")
}

// interpreters run the program their arguments give (less a version:
// python3.12 is python); a rule naming one alone allows any program.
var interpreters = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range []string{"python", "pypy", "node", "nodejs", "ruby", "perl", "php", "lua", "luajit", "tclsh", "Rscript", "R", "osascript",
		"julia", "tsx", "ts-node", "swift", "scala", "groovy", "kotlin", "guile", "racket", "sbcl", "clisp", "runghc", "runhaskell",
		"elixir", "escript", "ocaml", "swipl", "gforth", "wish", "jython",
		"bash", "sh", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "pwsh"} {
		m[p] = true
	}
	return m
})

// wrappers run the command their arguments name (find with -exec): a
// rule naming one, with whatever follows, allows any program.
var wrappers = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range []string{"env", "xargs", "sudo", "doas", "su", "nohup", "timeout", "nice", "ionice", "exec", "eval", "command",
		"builtin", "time", "stdbuf", "setsid", "unbuffer", "chroot", "watch", "parallel", "strace", "ltrace", "script", "flock", "nsenter", "unshare", "systemd-run", "source", ".", "find"} {
		m[p] = true
	}
	return m
})

// movers change any file they are given: a rule naming one alone allows
// moving away, copying over or deleting what a deny rule protects.
var movers = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range []string{"mv", "cp", "rm", "rmdir", "ln", "chmod", "chown", "chgrp", "install", "rsync", "dd", "truncate", "shred", "unlink"} {
		m[p] = true
	}
	return m
})

// heldAdvice says that the untrusted project's own allow rules would
// allow the call too, and what else trusting the project grants (also:
// brood's words for it, settings.ProjectTrust.Kinds).
func heldAdvice(held []trust.HeldRule, also []string) string {
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
	grant := "everything the project's files ask"
	if len(also) > 0 {
		grant += ": " + strings.Join(also, ", ")
	}
	return fmt.Sprintf("the project's allow %s %s%s would allow it too but %s held back until you trust the project, and brood trust (or --trust-project for one run) would also grant %s",
		noun, strings.Join(rules, " and "), where, verb, grant)
}

// commandPrefix is the narrowest useful prefix of a simple command's words
// for a rule, as Claude Code proposes it: the program with its subcommand
// ("git commit", "npm run test", "uv run pytest"), an interpreter with its
// module or script ("python3 -m pytest", "node build.js"), else the
// program (which scopeOf then may refuse to suggest: "python3" alone would
// allow any Python program).
func commandPrefix(f []string) string {
	prog := f[0]
	arg := func(i int) bool { return len(f) > i && f[i] != "" && !strings.HasPrefix(f[i], "-") }
	switch {
	case isInterpreter(interpName(prog)) && len(f) > 2 && f[1] == "-m" && arg(2):
		return prog + " -m " + f[2]
	case isInterpreter(interpName(prog)) && arg(1):
		return prog + " " + f[1]
	case subcommandTools()[prog] && arg(1):
		if (f[1] == "run" || f[1] == "exec" || f[1] == "x") && arg(2) {
			return prog + " " + f[1] + " " + f[2]
		}
		return prog + " " + f[1]
	}
	return prog
}

// askAdvice says where the ask rule that asked is: the files that name it
// (every one must drop it), or, when they are not known, the settings.
func askAdvice(rule string, files []string) string {
	where := "the settings that set it (brood config get permissions.ask)"
	if len(files) > 0 {
		where = strings.Join(files, ", ")
	}
	return fmt.Sprintf("to allow it remove %q from the permissions ask list of %s, or approve the call when asked (run brood without -p)", rule, where)
}
