package guard

import (
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// harmlessEnv reports a command whose environment assignments in front
// of its program (LANG=C git diff) can make it run nothing else and
// write nothing: only LC_*, LANG, TZ, NO_COLOR, TERM, and PAGER or
// GIT_PAGER set to cat, each a plain literal. Any other assignment
// (GIT_EXTERNAL_DIFF=x git diff, GOFLAGS=-toolexec=x go vet) may run a
// program: the command is then read-only only if the permissions' own
// check says so (review #3). A source that does not parse is not
// harmless.
func harmlessEnv(source string) bool {
	if source == "" {
		return true
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(source), "")
	if err != nil || len(f.Stmts) != 1 {
		return false
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		return false
	}
	for _, a := range call.Assigns {
		if a.Append || a.Naked || a.Array != nil || a.Index != nil || a.Name == nil {
			return false
		}
		value := ""
		if a.Value != nil {
			value = a.Value.Lit()
			if value == "" && len(a.Value.Parts) > 0 {
				return false
			}
		}
		switch name := a.Name.Value; {
		case name == "LANG" || name == "TZ" || name == "NO_COLOR" || name == "TERM" || strings.HasPrefix(name, "LC_"):
		case (name == "PAGER" || name == "GIT_PAGER") && value == "cat":
		default:
			return false
		}
	}
	return true
}

// literalWords are a simple command's words with their quotes removed,
// from its program on; ok is false when a word expands anything ($x,
// $(...), globs are kept as written) or the source is not one command.
func literalWords(source string) (words []string, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(source), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	call, isCall := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !isCall {
		return nil, false
	}
	for _, w := range call.Args {
		var b strings.Builder
		for _, p := range w.Parts {
			switch x := p.(type) {
			case *syntax.Lit:
				b.WriteString(x.Value)
			case *syntax.SglQuoted:
				b.WriteString(x.Value)
			case *syntax.DblQuoted:
				for _, q := range x.Parts {
					l, isLit := q.(*syntax.Lit)
					if !isLit {
						return nil, false
					}
					b.WriteString(l.Value)
				}
			default:
				return nil, false
			}
		}
		words = append(words, b.String())
	}
	return words, len(words) > 0
}

// sedPrint matches a sed script that only prints lines: addresses (a
// line, $, /regex/), a range of them, and p, joined by `;`. Nothing in it
// can write (w, W, s///w) or run (e, s///e) anything (review #8).
var sedPrint = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(((\d+|\$|/[^/\n]*/)(,(\d+|\$|/[^/\n]*/))?)?p;?)+$`)
})

// sedPrints reports sed -n with scripts that only print (sed -n 1,5p
// a.go, sed -n '/func Add/,/^}/p' a.go): no -i, no -f, no w or e.
func sedPrints(source string) bool {
	w, ok := literalWords(source)
	if !ok || w[0] != "sed" {
		return false
	}
	quietFlag, script := false, false
	for i := 1; i < len(w); i++ {
		a := w[i]
		switch {
		case a == "--quiet" || a == "--silent":
			quietFlag = true
		case a == "-e" || a == "--expression":
			if i+1 >= len(w) || !sedPrint().MatchString(w[i+1]) {
				return false
			}
			script, i = true, i+1
		case strings.HasPrefix(a, "--expression="):
			if !sedPrint().MatchString(strings.TrimPrefix(a, "--expression=")) {
				return false
			}
			script = true
		case strings.HasPrefix(a, "-") && len(a) > 1 && strings.Trim(a[1:], "nErsuz") == "":
			quietFlag = quietFlag || strings.Contains(a, "n")
		case strings.HasPrefix(a, "-"):
			return false
		case !script:
			if !sedPrint().MatchString(a) {
				return false
			}
			script = true
		}
	}
	return quietFlag && script
}
