package trust

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// LineCommand is one simple command of a shell line, or one redirection
// of it that writes a file, in the order the line writes them.
type LineCommand struct {
	// Words are its words from its program on, joined by single spaces
	// (as StatusCommands gives them); "" for a redirection.
	Words string
	// Source is the command as the line writes it (quotes kept, its
	// redirections left out).
	Source string
	// Writes: a redirection that writes a file (not /dev/null, a
	// descriptor), as `> f`, `>> f`, `&> f`, `<> f` do.
	Writes bool
	// Background: it runs in the background (`&`, coproc), so it may
	// still run after what the line writes after it.
	Background bool
}

// LineCommands are the simple commands of a shell line and its writing
// redirections, each once, in the order they are written (a command in
// a substitution, a group or a loop is a command of its own). ok is false
// when the line does not parse: nothing can be said of what it runs.
func LineCommands(command string) (cmds []LineCommand, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, false
	}
	type at struct {
		off uint
		c   LineCommand
	}
	var all []at
	var walk func(n syntax.Node, bg bool)
	walk = func(n syntax.Node, bg bool) {
		syntax.Walk(n, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.Stmt:
				if (x.Background || x.Coprocess) && !bg {
					walk(x, true)
					return false
				}
				for _, r := range x.Redirs {
					if RedirectWrites(r) {
						all = append(all, at{r.Pos().Offset(), LineCommand{Writes: true, Background: bg, Source: nodeSource(command, r)}})
					}
				}
			case *syntax.CallExpr:
				words := callWords(x)
				if len(words) == 0 {
					return true
				}
				all = append(all, at{x.Pos().Offset(), LineCommand{Words: words[0], Source: nodeSource(command, x), Background: bg}})
			}
			return true
		})
	}
	walk(f, false)
	slices.SortStableFunc(all, func(a, b at) int { return int(a.off) - int(b.off) })
	for _, a := range all {
		cmds = append(cmds, a.c)
	}
	return cmds, true
}

// nodeSource is a node's text in the line.
func nodeSource(line string, n syntax.Node) string {
	beg, end := int(n.Pos().Offset()), int(n.End().Offset())
	if beg < 0 || end > len(line) || beg > end {
		return ""
	}
	return line[beg:end]
}

// RedirectWrites reports a redirection that writes a file: any output
// redirection whose target is not /dev/null, /dev/stdout or /dev/stderr,
// and a >& or <& to anything but a descriptor number or "-" (>&2 and >&-
// duplicate or close a descriptor; >&word with any other word writes the
// file "word"). The permission check (tool) and the evidence guardrails
// both ask it.
func RedirectWrites(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
	case syntax.DplOut, syntax.DplIn:
		if r.Word == nil {
			return true
		}
		w := r.Word.Lit()
		return !(w != "" && strings.Trim(strings.TrimSuffix(w, "-"), "0123456789") == "") && w != "-"
	default:
		return false
	}
	if r.Word == nil {
		return true
	}
	switch strings.ReplaceAll(r.Word.Lit(), `\`, "") {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return false
	}
	return true
}
