package trust

import (
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// KnownPrograms is a shell command line with each program word that is
// only a variable's expansion ("$PYTHON" -m pytest, $PY, ${PY}) written
// out as the variable's value, where the line itself gave it that value
// for certain before the word runs: a plain assignment (PYTHON=python3)
// or export of a literal, alone as a statement of the line's top level or
// first in a top-level && chain, before the word, and the line's only
// mention of the name besides its plain expansions (no read, printf -v,
// unset, ${X:=}, a second assignment). The result reads as if the child
// had written the value: every later check judges that line. Any other
// computed program stays computed (a value from the environment is
// unknown), and a line that does not parse is returned as it is.
func KnownPrograms(command string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil || mentions(command, "IFS") > 0 {
		return command // IFS splits an unquoted $P other than as it reads
	}
	type known struct {
		value string
		after uint
	}
	vars := map[string]known{}
	for _, st := range f.Stmts {
		if st.Background || st.Negated || st.Coprocess {
			continue
		}
		first := st
		for {
			b, ok := first.Cmd.(*syntax.BinaryCmd)
			if !ok || b.Op != syntax.AndStmt || b.X.Background || b.X.Negated {
				break
			}
			first = b.X
		}
		for _, a := range literalAssigns(first.Cmd) {
			if n, v := a.Name.Value, wordText(a.Value, ""); plainValue().MatchString(v) && mentions(command, n) == 1+expansions(f, n) {
				vars[n] = known{v, uint(first.End().Offset())}
			}
		}
	}
	if len(vars) == 0 {
		return command
	}
	type edit struct {
		from, to uint
		value    string
	}
	var edits []edit
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		var words []string
		for _, w := range c.Args {
			words = append(words, wordText(w, ""))
		}
		i := programIndex(words)
		if i >= len(words) {
			return true
		}
		w := c.Args[i]
		if name := onlyExpansion(w); name != "" {
			if k, ok := vars[name]; ok && uint(w.Pos().Offset()) > k.after {
				edits = append(edits, edit{uint(w.Pos().Offset()), uint(w.End().Offset()), k.value})
			}
		}
		return true
	})
	slices.SortFunc(edits, func(a, b edit) int { return int(b.from) - int(a.from) })
	for _, e := range edits {
		command = command[:e.from] + e.value + command[e.to:]
	}
	return command
}

// plainValue is a value KnownPrograms writes out: a program's name or
// path, nothing the shell reads further.
func plainValue() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._/+-]+$`) }

// literalAssigns are the assignments of a statement that only assigns
// (X=v, export X=v), each value a literal.
func literalAssigns(x syntax.Command) []*syntax.Assign {
	var as []*syntax.Assign
	switch c := x.(type) {
	case *syntax.CallExpr:
		if len(c.Args) == 0 {
			as = c.Assigns
		}
	case *syntax.DeclClause:
		if c.Variant.Value == "export" {
			as = c.Args
		}
	}
	var out []*syntax.Assign
	for _, a := range as {
		if a.Name == nil || a.Value == nil || a.Append || a.Naked || a.Index != nil || a.Array != nil {
			continue
		}
		if len(a.Value.Parts) == 1 {
			if _, ok := a.Value.Parts[0].(*syntax.Lit); ok {
				out = append(out, a)
			}
		}
	}
	return out
}

// onlyExpansion is the variable a word is only the plain expansion of
// ($X, ${X}, "$X"; "" otherwise).
func onlyExpansion(w *syntax.Word) string {
	ps := w.Parts
	if len(ps) == 1 {
		if d, ok := ps[0].(*syntax.DblQuoted); ok {
			ps = d.Parts
		}
	}
	if len(ps) != 1 {
		return ""
	}
	p, ok := ps[0].(*syntax.ParamExp)
	if !ok || !plainExpansion(p) {
		return ""
	}
	return p.Param.Value
}

func plainExpansion(p *syntax.ParamExp) bool {
	return p.Param != nil && !p.Excl && !p.Length && !p.Width && p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil && p.Names == 0
}

// expansions counts the plain expansions of name in the line.
func expansions(f *syntax.File, name string) int {
	n := 0
	syntax.Walk(f, func(x syntax.Node) bool {
		if p, ok := x.(*syntax.ParamExp); ok && p.Param != nil && p.Param.Value == name && plainExpansion(p) {
			n++
		}
		return true
	})
	return n
}

// mentions counts name as a whole word of the line's text.
func mentions(command, name string) int {
	ident := func(i int) bool {
		if i < 0 || i >= len(command) {
			return false
		}
		b := command[i]
		return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	n := 0
	for i := 0; i+len(name) <= len(command); i++ {
		if command[i:i+len(name)] == name && !ident(i-1) && !ident(i+len(name)) {
			n++
		}
	}
	return n
}
