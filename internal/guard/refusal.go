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
// to the end of the refusal: rules in double quotes (Go's %q: a quote
// inside one is escaped) and flags in single quotes, between brood's own
// words (the rule to add and where, or the untrusted project's held-back
// rule that would allow it and `brood trust`; the older advice naming
// .brood/settings.toml is still read, from earlier records). A phrase of
// brood's inside the refused subject (a child's command or path, printed
// %q) cannot start it: there "add " is followed by an escaped quote.
// (Compiled at first use: a child runs every package initialiser.)
var adviceShape = sync.OnceValue(func() *regexp.Regexp {
	const rules = `"(?:[^"\\]|\\.)*"(?: and "(?:[^"\\]|\\.)*")*`
	const file = `(?:\.claude/settings(?:\.local)?\.json|\.brood/settings(?:\.local)?\.toml)`
	return regexp.MustCompile(`; (?:to allow it (?:add ` + rules + ` to \[permissions\] allow in (?:~/\.config/brood/settings\.toml|\.brood/settings\.toml), or pass --allow '[^']*'(?: --allow '[^']*')*|remove "(?:[^"\\]|\\.)*" from \[permissions\] ask in \.brood/settings\.toml)` +
		`|the project's allow rules? ` + rules + `(?: in ` + file + `(?:, ` + file + `)*)? would allow it but (?:is|are) held back until you trust the project: run brood trust \(or pass --trust-project for one run\))$`)
})

// quoted is one rule or flag of an advice.
var quoted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'[^']*'`) })

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
		return q[:1] + textline.Clip(q[1:len(q)-1], 160) + q[:1]
	})
	return textline.Clip(head, 240) + refusalAdvice + textline.Clip(advice, 1000)
}
