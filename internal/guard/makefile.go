package guard

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// makeDirective matches a makefile line after which brood cannot say what
// make runs: a shell or flags variable, .ONESHELL and the like, include,
// define, conditionals, $(eval) and $(shell) (which run when make reads
// the file), a != assignment (a shell command's output) and a double-colon
// rule.
var makeDirective = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(override\s+)?(SHELL|\.SHELLFLAGS|MAKEFLAGS|GNUMAKEFLAGS|MAKEFILES|\.RECIPEPREFIX)\s*[:?+!]*=|^\s*\.(ONESHELL|IGNORE|POSIX|RECIPEPREFIX|DEFAULT|SUFFIXES)\b|^\s*(-?include|sinclude|define|ifeq|ifneq|ifdef|ifndef|vpath|private|override|unexport)\b|\$[({](eval|shell|file|call|guile)\b|^[^\t#=]*!=|^[^\t#=]*::`)
})

var makeAssign = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*[:?+]*=\s*(.*)$`)
})

// makefile is what brood reads of a makefile: each target's recipe (a
// later recipe replaces an earlier one, as make does; `t: ; cmd` is
// one), its prerequisites, and the variables it exports.
type makefile struct {
	recipes map[string][]string
	prereqs map[string][]string
	env     []string
}

// parseMakefile reads a makefile (continued lines joined), or gives the
// first line that makes the rest unreadable to brood (makeDirective, or a
// rule line that sets a target-specific variable: `test: export X=1`).
func parseMakefile(text string) (mk makefile, directive string) {
	mk = makefile{recipes: map[string][]string{}, prereqs: map[string][]string{}}
	exportAll := strings.Contains(text, ".EXPORT_ALL_VARIABLES")
	var cur []string
	fresh := false // the current rule has no recipe line yet
	addRecipe := func(l string) {
		for _, t := range cur {
			if fresh {
				mk.recipes[t] = nil
			}
			mk.recipes[t] = append(mk.recipes[t], strings.TrimSpace(l))
		}
		fresh = false
	}
	for _, line := range strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n") {
		if makeDirective().MatchString(line) {
			return makefile{}, strings.TrimSpace(line)
		}
		if strings.HasPrefix(line, "\t") {
			addRecipe(line)
			continue
		}
		if m := makeAssign().FindStringSubmatch(line); m != nil {
			if m[1] != "" || exportAll {
				mk.env = append(mk.env, m[2]+"='"+strings.ReplaceAll(m[3], "'", "")+"'")
			}
			cur = nil
			continue
		}
		cur = nil
		head, rest, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		deps, inline, hasInline := strings.Cut(rest, ";")
		if strings.Contains(deps, "=") {
			return makefile{}, strings.TrimSpace(line) // a target-specific variable
		}
		cur, fresh = strings.Fields(head), true
		for _, t := range cur {
			mk.prereqs[t] = append(mk.prereqs[t], strings.Fields(strings.ReplaceAll(deps, "|", " "))...)
		}
		if hasInline {
			addRecipe(inline)
		}
	}
	return mk, ""
}

// recipeIsEvidence says why making target is not a test run ("" it is):
// every line of its recipe and of its prerequisites' recipes must be a
// test run brood accepts or a read-only command (a line that rewrites
// the tests before the run and restores them after fakes the pass), at
// least one a test run, none ignoring its failure (-) or taking words
// from make's variables.
func recipeIsEvidence(in Input, mk makefile, target string) string {
	tests := 0
	seen := map[string]bool{}
	var visit func(t string) string
	visit = func(t string) string {
		if seen[t] {
			return ""
		}
		seen[t] = true
		for _, p := range mk.prereqs[t] {
			if why := visit(p); why != "" {
				return why
			}
		}
		for _, l := range mk.recipes[t] {
			l = strings.TrimLeft(l, "@+ \t")
			if strings.HasPrefix(l, "-") {
				return "ignores a failure (" + l + ")"
			}
			if strings.Contains(l, "$(") || strings.Contains(l, "${") {
				return "takes words from make variables (" + l + ")"
			}
			if !isTest(in, l) {
				if l == "" || plainGoBuild(l) || printsOnly(l) || (in.ReadOnly != nil && in.ReadOnly(l)) {
					continue
				}
				return "runs " + l + ", which is neither a test run nor read-only"
			}
			if why := lineIsEvidence(in, strings.TrimSpace(strings.Join(mk.env, " ")+" "+l)); why != "" {
				return why + " (" + l + ")"
			}
			tests++
		}
		return ""
	}
	if why := visit(target); why != "" {
		return why
	}
	if tests == 0 {
		return "runs no test command brood knows"
	}
	return ""
}

// plainGoBuild reports a plain `go build` or `go vet` line: it compiles, runs
// no code of the repository's and writes no file of the tree (no -o,
// -toolexec, -exec, -overlay, -modfile, no shell operator).
func plainGoBuild(l string) bool {
	w := strings.Fields(l)
	if len(w) < 2 || w[0] != "go" || (w[1] != "build" && w[1] != "vet") || strings.ContainsAny(l, ";&|<>$`\\'\"") {
		return false
	}
	for _, a := range w[2:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "o" || name == "toolexec" || name == "exec" || name == "overlay" || name == "modfile" || name == "vettool" || name == "C") {
			return false
		}
	}
	return true
}

// printsOnly reports an echo, printf, true or : line with no shell
// operator, substitution or redirection: it only prints.
func printsOnly(l string) bool {
	w := strings.Fields(l)
	return len(w) > 0 && slices.Contains([]string{"echo", "printf", "true", ":"}, w[0]) && !strings.ContainsAny(l, ";&|<>$`()\\")
}
