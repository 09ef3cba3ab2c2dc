package guard

import (
	"strings"

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
