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
	// Hidden: its standard output does not reach the line's output (sent
	// to a file or /dev/null, its own or its group's, or captured by a
	// $(...) substitution).
	Hidden bool
	// Pipe are the commands its output is piped through, in order (each
	// one's words as Words gives them; "?" for one that is no simple
	// command): what reaches the line's output is the last one's.
	Pipe []string
	// Detaches: a word of it is (or a word's field is) nohup, setsid or
	// disown, which may leave a job running after the line, unless its
	// program only reads text (grep setsid notes.txt): see detaches.
	Detaches bool
}

// lineCtx is what a statement inherits from where the line puts it.
type lineCtx struct {
	bg, hidden bool
	pipe       []string
}

type lineWalker struct {
	src string
	all []lineAt
}

type lineAt struct {
	off uint
	c   LineCommand
}

// LineCommands are the simple commands of a shell line and its writing
// redirections, each once, in the order they are written (a command in
// a substitution, a group or a loop is a command of its own). ok is false
// when the line does not parse or is past MaxLineBytes/MaxLineNodes:
// nothing can be said of what it runs.
func LineCommands(command string) (cmds []LineCommand, ok bool) {
	f, ok := parseBounded(command)
	if !ok {
		return nil, false
	}
	w := &lineWalker{src: command}
	for _, st := range f.Stmts {
		w.stmt(st, lineCtx{})
	}
	slices.SortStableFunc(w.all, func(a, b lineAt) int { return int(a.off) - int(b.off) })
	for _, a := range w.all {
		cmds = append(cmds, a.c)
	}
	return cmds, true
}

// stmt records one statement's writing redirections and its commands.
func (w *lineWalker) stmt(st *syntax.Stmt, ctx lineCtx) {
	ctx.bg = ctx.bg || st.Background || st.Coprocess
	for _, r := range st.Redirs {
		if RedirectWrites(r) {
			w.all = append(w.all, lineAt{r.Pos().Offset(), LineCommand{Writes: true, Background: ctx.bg, Source: nodeSource(w.src, r)}})
		}
		if r.Word != nil {
			w.nested(r.Word, ctx)
		}
	}
	ctx.hidden = stdoutHidden(st.Redirs, ctx.hidden)
	switch x := st.Cmd.(type) {
	case *syntax.CallExpr:
		w.nested(x, ctx)
		words, det := callWords(x), detaches(x)
		if len(words) == 0 && det {
			words = []string{nodeSource(w.src, x)} // env -S 'setsid x': all wrapper
		}
		if len(words) == 0 {
			return
		}
		w.all = append(w.all, lineAt{x.Pos().Offset(), LineCommand{Words: words[0], Source: nodeSource(w.src, x), Background: ctx.bg,
			Hidden: ctx.hidden, Pipe: ctx.pipe, Detaches: det}})
	case *syntax.BinaryCmd:
		if x.Op != syntax.Pipe && x.Op != syntax.PipeAll {
			w.stmt(x.X, ctx)
			w.stmt(x.Y, ctx)
			return
		}
		elems := pipeline(x)
		// Each element's pipe is a suffix of one slice (clipped, so that
		// no one appends into the next): linear in the pipeline's length.
		all := append(pipeWords(elems), ctx.pipe...)
		for i, e := range elems {
			c := ctx
			c.pipe = slices.Clip(all[i+1:])
			w.stmt(e, c)
		}
	default:
		w.nested(st.Cmd, ctx)
	}
}

// nested records the statements inside n (a group's, a loop's, a
// substitution's): a substitution's output is captured, not shown.
func (w *lineWalker) nested(n syntax.Node, ctx lineCtx) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			for _, st := range x.Stmts {
				w.stmt(st, lineCtx{bg: ctx.bg, hidden: true})
			}
			return false
		case *syntax.ProcSubst:
			for _, st := range x.Stmts {
				w.stmt(st, lineCtx{bg: ctx.bg, hidden: true})
			}
			return false
		case *syntax.Stmt:
			w.stmt(x, ctx)
			return false
		}
		return true
	})
}

// pipeline is a pipeline's elements in order.
func pipeline(b *syntax.BinaryCmd) []*syntax.Stmt {
	var out []*syntax.Stmt
	for _, s := range []*syntax.Stmt{b.X, b.Y} {
		if inner, ok := s.Cmd.(*syntax.BinaryCmd); ok && (inner.Op == syntax.Pipe || inner.Op == syntax.PipeAll) && len(s.Redirs) == 0 && !s.Negated {
			out = append(out, pipeline(inner)...)
			continue
		}
		out = append(out, s)
	}
	return out
}

// pipeWords are the words of the pipeline elements a command's output
// flows through ("?" for one that is no simple command).
func pipeWords(elems []*syntax.Stmt) []string {
	var out []string
	for _, e := range elems {
		words := []string{"?"}
		if c, ok := e.Cmd.(*syntax.CallExpr); ok && len(e.Redirs) == 0 {
			if w := callWords(c); len(w) > 0 {
				words = w
			}
		}
		out = append(out, words[0])
	}
	return out
}

// stdoutHidden follows a statement's redirections of descriptors 1 and 2
// in order: whether descriptor 1 ends in a file, /dev/null or closed
// (hidden), starting from hidden for the enclosing statement's.
func stdoutHidden(redirs []*syntax.Redirect, hidden bool) bool {
	fd := map[string]bool{"1": hidden, "2": hidden} // true: hidden
	for _, r := range redirs {
		n := "1"
		if r.N != nil {
			n = r.N.Value
		}
		target := ""
		if r.Word != nil {
			target = r.Word.Lit()
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob:
			fd[n] = target != "/dev/stdout" && target != "/dev/stderr"
		case syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
			fd["1"], fd["2"] = true, true
		case syntax.DplOut:
			if d, isFd := fd[target]; isFd {
				fd[n] = d
			} else {
				fd[n] = true // >&- closes it; >&file writes a file
			}
		}
	}
	return fd["1"]
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
