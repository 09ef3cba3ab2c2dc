package trust

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// testPrograms are the programs whose arguments choose what a test run
// does: an argument of theirs taken from a variable the line set
// (x=-exec=true; go test $x) cannot be read from the line's words.
var testPrograms = []string{"go", "cargo", "pytest", "py.test", "python", "python3", "npm", "npx", "yarn", "pnpm", "bun", "deno",
	"jest", "vitest", "tox", "nox", "make", "ctest", "gradle", "gradlew", "mvn", "rspec", "bundle", "mix", "dotnet", "phpunit"}

// nameSetters are the builtins that set the variables they name in their
// arguments (read GOFLAGS <<< -exec=true, printf -v GOFLAGS ...).
var nameSetters = []string{"read", "mapfile", "readarray", "printf", "getopts", "let"}

var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// setByOtherMeans says why a line sets a variable that changes what runs
// other than by an assignment Undermined reads ("" none), or gives a test
// program an argument from a variable the same line set, whose value its
// words do not show: read, printf -v, mapfile naming GOFLAGS or PATH,
// ${GOFLAGS:=...}, declare -n r=GOFLAGS, `go test $x` after x=-exec=true,
// "$@" after set --.
func setByOtherMeans(f *syntax.File) string {
	set := map[string]bool{}
	why := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Assign:
			if x.Name != nil {
				set[x.Name.Value] = true
				if v := assignValue(x); shellName.MatchString(v) && statusVariable(v, "`") {
					why = fmt.Sprintf("it names %s in an assignment (%s=%s), which can set it unseen", v, x.Name.Value, v)
				}
			}
		case *syntax.ForClause:
			if wi, ok := x.Loop.(*syntax.WordIter); ok {
				set[wi.Name.Value] = true
			}
		case *syntax.ParamExp:
			if x.Param != nil && x.Exp != nil && (x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) {
				set[x.Param.Value] = true
				if statusVariable(x.Param.Value, "`") {
					why = fmt.Sprintf("it sets %s with ${%s:=...}, which changes what runs", x.Param.Value, x.Param.Value)
				}
			}
		case *syntax.CallExpr:
			if w := setterNames(x); len(w) > 0 {
				for _, name := range w {
					set[name] = true
					if why == "" && statusVariable(name, "`") {
						why = fmt.Sprintf("it sets %s with %s, which changes what runs", name, wordText(x.Args[0], ""))
					}
				}
			}
		}
		return why == ""
	})
	if why != "" {
		return why
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && why == "" {
			why = argFromSetVariable(c, set)
		}
		return why == ""
	})
	return why
}

// setterNames are the variable names a read/printf -v/mapfile/... call
// sets: every word of it that is a shell name.
func setterNames(c *syntax.CallExpr) []string {
	if len(c.Args) == 0 || !slices.Contains(nameSetters, filepath.Base(wordText(c.Args[0], ""))) {
		return nil
	}
	var names []string
	for _, w := range c.Args[1:] {
		if t := wordText(w, ""); shellName.MatchString(t) {
			names = append(names, t)
		}
	}
	return names
}

// argFromSetVariable says why a test program's call takes an argument
// from a variable the line set, or from the positional parameters ("").
func argFromSetVariable(c *syntax.CallExpr, set map[string]bool) string {
	var words []string
	for _, w := range c.Args {
		words = append(words, wordText(w, ""))
	}
	i := programIndex(words)
	if i >= len(words) || !slices.Contains(testPrograms, filepath.Base(words[i])) {
		return ""
	}
	why := ""
	for _, w := range c.Args[i+1:] {
		syntax.Walk(w, func(n syntax.Node) bool {
			if p, ok := n.(*syntax.ParamExp); ok && p.Param != nil && why == "" {
				name := p.Param.Value
				if set[name] || strings.ContainsAny(name, "@*#") || (len(name) == 1 && name[0] >= '0' && name[0] <= '9') {
					why = fmt.Sprintf("its %s takes an argument from $%s, which the line set: what it runs with cannot be read", words[i], name)
				}
			}
			return why == ""
		})
	}
	return why
}

// goConfigMoved says why a line that runs go moves where go reads its own
// settings ("" none): HOME or XDG_CONFIG_HOME set anywhere in it points go
// at a go/env file an earlier `go env -w GOFLAGS=-exec=true` could have
// written (GOENV is refused by statusVariable everywhere).
func goConfigMoved(f *syntax.File) string {
	runsGo, moved := false, ""
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Assign:
			if x.Name != nil && (x.Name.Value == "HOME" || x.Name.Value == "XDG_CONFIG_HOME") {
				moved = x.Name.Value
			}
		case *syntax.CallExpr:
			var words []string
			for _, w := range x.Args {
				words = append(words, wordText(w, ""))
			}
			i := programIndex(words)
			for _, w := range words[:i] {
				if k, _, ok := strings.Cut(w, "="); ok && (k == "HOME" || k == "XDG_CONFIG_HOME") {
					moved = k
				}
			}
			if i < len(words) && filepath.Base(words[i]) == "go" {
				runsGo = true
			}
		}
		return true
	})
	if runsGo && moved != "" {
		return fmt.Sprintf("it sets %s for go, which reads its settings (GOFLAGS) from there", moved)
	}
	return ""
}

// Dirs are the directories a line changes to with cd or pushd, in order,
// as written ("~" for a cd with no argument, which goes home), with the
// project directory variables ($BROOD_PROJECT_DIR) as root.
func Dirs(command, root string) []string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil
	}
	var dirs []string
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		var words []string
		for _, w := range c.Args {
			words = append(words, wordText(w, root))
		}
		i := programIndex(words)
		if i >= len(words) || (words[i] != "cd" && words[i] != "pushd") {
			return true
		}
		args := words[i+1:]
		for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
			args = args[1:]
		}
		if len(args) == 0 {
			args = []string{"~"}
		}
		dirs = append(dirs, args[0])
		return true
	})
	return dirs
}
