package guard

import (
	"regexp"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/textline"
)

// refusalAdvice starts a permission refusal's advice: the rule to add and
// where (tool.permit's words).
const refusalAdvice = " and no one is here to give it"

// adviceShape is the whole advice tool.permit writes after refusalAdvice,
// to the end of the refusal (internal/tool/advice.go): rules in double
// quotes (Go's %q: a quote inside one is escaped) and flags in single
// quotes (a single quote inside one closed, escaped and reopened, as a
// shell reads it), between brood's own words:
// the rule to add and where (the user's file, or this project's local
// file for a program of the repository's), or that no rule is worth
// keeping and the exact line for one run, or the ask rule to remove and
// its files; then, for an untrusted project's held-back rule, that it is
// held back and what brood trust would also grant. The older advice
// (the project's .brood/settings.toml, `run brood trust`) is still read,
// from earlier records. A phrase of brood's inside the refused subject (a
// child's command or path, printed %q) cannot start it: there "add " is
// followed by an escaped quote.
// (Compiled at first use: a child runs every package initialiser.)
var adviceShape = sync.OnceValue(func() *regexp.Regexp {
	const str = `"(?:[^"\\]|\\.)*"`
	const rules = str + `(?: and ` + str + `)*`
	const flag = `'(?:[^']|'\\'')*'`
	const file = `(?:\.claude/settings(?:\.local)?\.json|\.brood/settings(?:\.local)?\.toml)`
	const anyFile = `(?:~/\.config/brood/settings\.toml|~/\.claude/settings\.json|` + file + `|the --settings file)`
	const add = `to allow it add ` + rules + ` to \[permissions\] allow in (?:~/\.config/brood/settings\.toml|\.brood/settings\.toml|\.brood/settings\.local\.toml \(this project only: edited by hand, it needs brood trust\)), or pass --allow ` + flag + `(?: --allow ` + flag + `)*`
	const none = `no rule to keep is suggested \(one for (?:` + str + `|all of Bash) would allow far more than this call\): approve the call when asked \(run brood without -p\)(?:, or pass --allow ` + flag + ` for one run)?`
	const remove = `to allow it remove ` + str + ` from (?:\[permissions\] ask in \.brood/settings\.toml|the permissions ask list of (?:` + anyFile + `(?:, ` + anyFile + `)*|the settings that set it \(brood config get permissions\.ask\)), or approve the call when asked \(run brood without -p\))`
	const kind = `[a-zA-Z._]+(?: [a-zA-Z._]+)*`
	const held = `the project's allow rules? ` + rules + `(?: in ` + file + `(?:, ` + file + `)*)? would allow it`
	const heldNow = held + ` too but (?:is|are) held back until you trust the project, and brood trust \(or --trust-project for one run\) would also grant everything the project's files ask(?:: ` + kind + `(?:, ` + kind + `)*)?`
	const heldOld = held + ` but (?:is|are) held back until you trust the project: run brood trust \(or pass --trust-project for one run\)`
	return regexp.MustCompile(`; (?:(?:` + add + `|` + none + `)(?:; ` + heldNow + `)?|` + remove + `|` + heldOld + `)$`)
})

// namedAgain is the start of a permission refusal that names the call
// (tool.permit's "permission denied: Bash \"make build\" "), before what
// it needs: the concern has named the call already.
var namedAgain = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^permission denied: [A-Za-z0-9_-]+ "(?:[^"\\]|\\.)*" `)
})

// quoted is one rule or flag of an advice (a flag after its --allow: the
// advice's words have quotes of their own, "the project's").
var quoted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(?:[^"\\]|\\.)*"|--allow '(?:[^']|'\\'')*'`) })

// refusalLine is a refusal bounded to one line (issue 26 F2): what was
// refused is cut at 240 runes; an advice of tool.permit's shape follows
// it whole but for each quoted rule or flag, which repeats the child's
// subject and is cut at 160 runes, so brood's own words (the rule goes in
// [permissions] allow in .brood/settings.toml, or --allow) always show. A
// refusal of any other shape is cut at 240: a child writes its
// transcript, and its words never pass for brood's advice.
func refusalLine(r string) string {
	r = textline.Line(r, 0)
	loc := adviceShape().FindStringIndex(r)
	if loc == nil || !strings.HasSuffix(r[:loc[0]], refusalAdvice) {
		return textline.Clip(r, 240)
	}
	head := strings.TrimSuffix(r[:loc[0]], refusalAdvice)
	advice := quoted().ReplaceAllStringFunc(r[loc[0]:], func(q string) string {
		q, flag := strings.CutPrefix(q, "--allow ")
		q = q[:1] + textline.Clip(q[1:len(q)-1], 160) + q[:1]
		if flag {
			q = "--allow " + q
		}
		return q
	})
	return textline.Clip(head, 240) + refusalAdvice + textline.Clip(advice, 1000)
}
