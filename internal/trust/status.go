package trust

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// StatusCommands are the simple commands of a shell command line whose
// success an exit status of 0 from the whole line proves: the last
// statement's, and in it every command of an && chain, the last element of
// a pipeline (without pipefail the pipeline's status is its last
// element's: `go test ./... | tail -5` exits 0 when the tests fail), the
// last statement of a { } or ( ) group. A command before a `;`, on the left
// of `||` or on either side of it, negated with `!`, in the background or
// in an if or loop proves nothing by the line's status. Each is its words
// joined by single spaces, after VAR=value assignments and wrappers such as
// env, timeout 60 or nice. A line that does not parse has none.
func StatusCommands(command string) []string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil || len(f.Stmts) == 0 {
		return nil
	}
	return statusOf(f.Stmts[len(f.Stmts)-1])
}

func statusOf(st *syntax.Stmt) []string {
	if st == nil || st.Negated || st.Background || st.Coprocess {
		return nil
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		return callWords(c)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			return append(statusOf(c.X), statusOf(c.Y)...)
		case syntax.Pipe, syntax.PipeAll:
			return statusOf(c.Y)
		}
	case *syntax.Block:
		if n := len(c.Stmts); n > 0 {
			return statusOf(c.Stmts[n-1])
		}
	case *syntax.Subshell:
		if n := len(c.Stmts); n > 0 {
			return statusOf(c.Stmts[n-1])
		}
	case *syntax.TimeClause:
		return statusOf(c.Stmt)
	}
	return nil
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
