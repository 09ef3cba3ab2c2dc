package workflow

import (
	"regexp"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
)

// maxMatchPattern bounds the pattern PromptMatches builds (the signed
// inputs quoted in it): a brief past it is not matched.
const maxMatchPattern = 4 << 20

// PromptMatches reports whether text is a brief the call template tmpl
// of plan p renders on a run with inputs (as its submitter signed them:
// ResolveInputs'), every hole holding what it may hold (a fleet worker's
// check of a call's prompt, whoever completed the workflow task):
//
//   - a hole of the user's values (inputs..., an each's item over the
//     inputs) the value the signed inputs give it, exactly (past
//     maxAltValues values, a lazy group looked up in their set: a brief
//     whose split is ambiguous is refused, never wrongly taken); with no
//     inputs signed, any text without a subagent-result tag in it;
//   - round and vote, a number;
//   - an agent's value (an earlier phase's or task's output, prev, seen,
//     an item over outputs), one untrusted block from that selector
//     (untrustedBlock: on lines of its own, its body holding no tag, as
//     Defang leaves it), or a number, true, false or null.
//
// The literal text between the holes is the template's, in order, the
// first at the start and the last at the end.
func PromptMatches(p *Plan, tmpl, text string, inputs map[string]any) bool {
	t, err := ParseTemplate(tmpl)
	if err != nil {
		return tmpl == text
	}
	pattern, checks, ok := matchPattern(t, ownValues(p, inputs))
	if !ok {
		return false
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return false
	}
	m := re.FindStringSubmatchIndex(text)
	if m == nil {
		return false
	}
	// Every group that took part holds no tag: a block's body cannot
	// close the block early and speak as the plan.
	for g := 1; g < len(m)/2 && g-1 < len(checks); g++ {
		if m[2*g] >= 0 && !checks[g-1](text[m[2*g]:m[2*g+1]]) {
			return false
		}
	}
	return true
}

// maxAltValues is the most values a hole's alternation lists: past it
// the hole is one lazy group whose text must be one of them (a set
// lookup), so a submitter's long list (18k items) costs the worker a
// match linear in the prompt, not one per item at each position.
const maxAltValues = 64

// matchPattern is the anchored pattern a brief of template t matches, the
// check of each capture group in order, and ok unset past maxMatchPattern
// or for a hole nothing may fill.
func matchPattern(t *Template, own func(Selector) ([]string, bool)) (string, []func(string) bool, bool) {
	var b strings.Builder
	b.WriteString(`^`)
	var checks []func(string) bool // per capture group, in order
	for i, part := range t.parts {
		if part.sel == nil {
			b.WriteString(regexp.QuoteMeta(part.text))
			continue
		}
		sel := *part.sel
		var alts []string
		vals, isOwn := own(sel)
		switch {
		case isOwn && vals == nil:
			alts = append(alts, `((?s:.*?))`)
			checks = append(checks, tagless)
		case isOwn && len(vals) <= maxAltValues:
			for _, v := range vals {
				alts = append(alts, regexp.QuoteMeta(v))
			}
		}
		if sel.Root == "round" || sel.Root == "vote" {
			alts = append(alts, `[0-9]+`)
		}
		if !isOwnRoot(sel.Root) {
			// An agent's value: its block, on lines of its own (Render), or
			// a value that carries no text.
			lead, trail := `\n?`, `\n?`
			if i == 0 || strings.HasSuffix(t.parts[i-1].text, "\n") {
				lead = ""
			}
			alts = append(alts, lead+regexp.QuoteMeta(blockHead(sel))+`((?s:.*?))`+regexp.QuoteMeta(blockTail(sel))+trail,
				`null|true|false|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?`)
			checks = append(checks, tagless)
		}
		if isOwn && len(vals) > maxAltValues {
			// Last, so an agent's block is tried first.
			alts = append(alts, `((?s:.*?))`)
			checks = append(checks, oneOf(vals))
		}
		if len(alts) == 0 {
			return "", nil, false
		}
		b.WriteString(`(?:` + strings.Join(alts, `|`) + `)`)
		if b.Len() > maxMatchPattern {
			return "", nil, false
		}
	}
	b.WriteString(`$`)
	return b.String(), checks, true
}

// oneOf reports whether a text is one of vals.
func oneOf(vals []string) func(string) bool {
	set := make(map[string]bool, len(vals))
	for _, v := range vals {
		set[v] = true
	}
	return func(s string) bool { return set[s] }
}

// tagless reports whether s holds no subagent-result tag, as Defang
// leaves a body.
func tagless(s string) bool { return dispatch.Defang(s) == s }

// isOwnRoot reports whether a selector's root may be the user's or the
// runtime's (inputs, an each's item, round, vote): Render inserts such a
// value as it is.
func isOwnRoot(root string) bool {
	return root == "inputs" || root == "round" || root == "vote"
}

// ownValues is, for a hole, the texts the user's values can put there:
// the signed inputs' (inputs..., an item of an each over the inputs), and
// ok false for a hole no such value fills. A nil list with ok: any
// (no inputs were signed).
func ownValues(p *Plan, inputs map[string]any) func(Selector) ([]string, bool) {
	items := map[string][]any{} // an each's item name -> the items over the inputs
	for i := range p.Phases {
		ph := &p.Phases[i]
		if ph.Each == "" {
			continue
		}
		es, err := ParseSelector(ph.Each)
		if err != nil || es.Root != "inputs" {
			continue
		}
		as := ph.As
		if as == "" {
			as = "item"
		}
		if inputs == nil {
			items[as] = nil
			continue
		}
		v, _ := es.Eval(map[string]any{"inputs": Own(inputs)})
		if list, ok := v.([]any); ok {
			items[as] = append(items[as], list...)
		} else if v != nil {
			items[as] = append(items[as], v)
		}
	}
	return func(sel Selector) ([]string, bool) {
		switch {
		case sel.Root == "inputs" && inputs == nil:
			return nil, true
		case sel.Root == "inputs":
			v, _ := sel.Eval(map[string]any{"inputs": Own(inputs)})
			return []string{formatValue(v)}, true
		}
		list, ok := items[sel.Root]
		if !ok {
			return nil, false
		}
		if inputs == nil {
			return nil, true
		}
		out := []string{}
		for _, it := range list {
			v, _ := sel.Eval(map[string]any{sel.Root: Own(it)})
			out = append(out, formatValue(v))
		}
		return out, true
	}
}
