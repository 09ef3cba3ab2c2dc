package tool

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wordOf is one shell word as the program receives it when the shell adds
// nothing of its own: quotes and escapes removed, and lit set. A word with
// an expansion ($x, $(…), `…`, $((…))), a glob, a brace or "~user" is
// returned as written (quotes dropped) with lit unset.
func wordOf(src string, w *syntax.Word) shWord {
	var b strings.Builder
	lit, head := true, ""
	computed := func() {
		if lit {
			head = b.String()
		}
		lit = false
	}
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if strings.ContainsAny(v, "*?[{") || (i == 0 && strings.HasPrefix(v, "~") && !strings.HasPrefix(v, "~/") && v != "~") {
				computed()
			}
			b.WriteString(unescapeLit(v))
		case *syntax.SglQuoted:
			if p.Dollar {
				computed()
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescapeDbl(l.Value))
					continue
				}
				computed()
				b.WriteString(unquote(source(src, q.Pos(), q.End())))
			}
		default:
			computed()
			b.WriteString(unquote(source(src, part.Pos(), part.End())))
		}
	}
	if lit {
		head = b.String()
	}
	return shWord{text: b.String(), lit: lit, head: head}
}

// unescapeLit drops the backslashes of an unquoted literal ("\-\-output"
// is "--output"); a backslash before a newline joins the lines.
func unescapeLit(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDbl drops the backslashes that mean something inside double
// quotes (before $ ` " \ and a newline) and keeps the others.
func unescapeDbl(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// changesDir reports a command that changes the shell's directory, also
// behind "command" or "builtin".
func changesDir(args []shWord) bool {
	for len(args) > 0 && (args[0].text == "command" || args[0].text == "builtin") {
		args = args[1:]
	}
	if len(args) == 0 {
		return false
	}
	switch path.Base(args[0].text) {
	case "cd", "pushd", "popd":
		return true
	}
	return false
}

// texts are the words' texts.
func texts(ws []shWord) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}
