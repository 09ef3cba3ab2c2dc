package trust

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// StatusCommands are the simple commands of a shell command line whose
// success an exit status of 0 from the whole line proves: the last
// statement's, and in it every command of an && chain, the last element of
// a pipeline (without pipefail the pipeline's status is its last
// element's: `go test ./... | tail -5` exits 0 when the tests fail), the
// last statement of a { } or ( ) group; every element of a pipeline once
// the line set pipefail before it (`set -o pipefail; go test ./... | tail`,
// `set -euo pipefail && …`: a top-level statement before it or the left of
// its && chain). A command before a `;`, on the left
// of `||` or on either side of it, negated with `!`, in the background or
// in an if or loop proves nothing by the line's status. Each is its words
// joined by single spaces, after VAR=value assignments and wrappers such as
// env, timeout 60 or nice. A line that does not parse, or is past
// MaxLineBytes/MaxLineNodes, has none.
func StatusCommands(command string) []string {
	f, ok := parseBounded(command)
	if !ok || len(f.Stmts) == 0 {
		return nil
	}
	pipefail := false
	for _, st := range f.Stmts[:len(f.Stmts)-1] {
		pipefail = setsPipefail(st, pipefail)
	}
	return statusOf(f.Stmts[len(f.Stmts)-1], &pipefail)
}

func statusOf(st *syntax.Stmt, pipefail *bool) []string {
	if st == nil || st.Negated || st.Background || st.Coprocess {
		return nil
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		*pipefail = setsPipefail(st, *pipefail)
		return callWords(c)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			return append(statusOf(c.X, pipefail), statusOf(c.Y, pipefail)...)
		case syntax.Pipe, syntax.PipeAll:
			if *pipefail {
				return append(statusOf(c.X, pipefail), statusOf(c.Y, pipefail)...)
			}
			return statusOf(c.Y, pipefail)
		}
	case *syntax.Block:
		if n := len(c.Stmts); n > 0 {
			return statusOf(c.Stmts[n-1], pipefail)
		}
	case *syntax.Subshell:
		if n := len(c.Stmts); n > 0 {
			return statusOf(c.Stmts[n-1], pipefail)
		}
	case *syntax.TimeClause:
		return statusOf(c.Stmt, pipefail)
	}
	return nil
}

// setsPipefail is whether pipefail is on after the statement st, given
// on before it: a `set` that turns it on (-o pipefail, -euo pipefail) or
// off (+o pipefail); any other statement leaves it as it was. set's
// options are read as bash reads them: up to `--`, `-` or the first word
// that is no option (`set -- -o pipefail` sets positional parameters),
// and not past a letter bash does not know (set fails there).
func setsPipefail(st *syntax.Stmt, on bool) bool {
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Background || len(c.Args) == 0 || wordText(c.Args[0], "") != "set" {
		return on
	}
	words := make([]string, 0, len(c.Args))
	for _, w := range c.Args[1:] {
		words = append(words, wordText(w, ""))
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" || w == "-" || len(w) < 2 || (w[0] != '-' && w[0] != '+') {
			return on
		}
		for _, r := range w[1:] {
			switch {
			case r == 'o':
				i++
				if i >= len(words) {
					return on
				}
				if !slices.Contains(setOptionNames(), words[i]) {
					return on // an invalid option name: set stops there
				}
				if words[i] == "pipefail" {
					on = w[0] == '-'
				}
			case !strings.ContainsRune("abefhkmnptuvxBCEHPT", r):
				return on // an invalid option: set stops with an error
			}
		}
	}
	return on
}

// setOptionNames are the names bash's `set -o` knows.
func setOptionNames() []string {
	return strings.Fields("allexport braceexpand emacs errexit errtrace functrace hashall histexpand history " +
		"ignoreeof interactive-comments keyword monitor noclobber noexec noglob nolog notify nounset onecmd " +
		"physical pipefail posix privileged verbose vi xtrace")
}

// callWords is a simple command's words from its program on, joined.
func callWords(c *syntax.CallExpr) []string {
	var words []string
	for _, w := range c.Args {
		words = append(words, wordText(w, ""))
	}
	i := programIndex(words)
	if i >= len(words) {
		return nil
	}
	return []string{strings.Join(words[i:], " ")}
}
