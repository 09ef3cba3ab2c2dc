package tui

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// The model's answer is rendered as markdown by goldmark's CommonMark
// parser and the small terminal renderer below. (glamour did this before;
// it links chroma's lexers and styles, bluemonday and goldmark's
// extensions, whose package initialisers cost every brood process, a
// child started as brood included, about half of its start-up CPU.)
// Without colour the markers stay as written (**bold**, `code`), as
// glamour's plain style did.

// mdMargin is the left margin of rendered markdown.
const mdMargin = "  "

// mdStyles are markdown's styles (all plain without colour).
type mdStyles struct {
	color                                       bool
	heading, strong, em, code, link, quote, fen lipgloss.Style
}

func newMDStyles(color bool) mdStyles {
	p := lipgloss.NewStyle()
	s := mdStyles{color: color, heading: p, strong: p, em: p, code: p, link: p, quote: p, fen: p}
	if !color {
		return s
	}
	s.heading = p.Bold(true).Foreground(lipgloss.Color("12"))
	s.strong, s.em = p.Bold(true), p.Italic(true)
	s.code = p.Foreground(lipgloss.Color("203"))
	s.link = p.Underline(true).Foreground(lipgloss.Color("14"))
	s.quote = p.Foreground(lipgloss.Color("8"))
	s.fen = p.Foreground(lipgloss.Color("250"))
	return s
}

// mdRenderer renders markdown to lines of at most width cells.
type mdRenderer struct {
	p     parser.Parser
	st    mdStyles
	width int
}

func newMDRenderer(color bool, width int) *mdRenderer {
	p := parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...))
	return &mdRenderer{p: p, st: newMDStyles(color), width: max(20, width-4)}
}

// render returns src's lines (without trailing blanks).
func (r *mdRenderer) render(src string) []string {
	b := []byte(src)
	doc := r.p.Parse(text.NewReader(b))
	var out []string
	r.blocks(doc, b, mdMargin, &out, false)
	for i, l := range out {
		out[i] = strings.TrimRight(l, " ")
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// blocks renders n's block children, each line prefixed with indent, a
// blank line between them unless tight (a tight list's items).
func (r *mdRenderer) blocks(n ast.Node, src []byte, indent string, out *[]string, tight bool) {
	first := true
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if !first && !tight {
			*out = append(*out, "")
		}
		first = false
		r.block(c, src, indent, out)
	}
}

func (r *mdRenderer) block(n ast.Node, src []byte, indent string, out *[]string) {
	w := max(10, r.width-ansi.StringWidth(indent))
	switch n := n.(type) {
	case *ast.Heading:
		h := strings.Repeat("#", n.Level) + " " + r.inline(n, src)
		r.wrapped(r.st.heading.Render(h), indent, w, out)
	case *ast.Paragraph, *ast.TextBlock:
		if tableLike(n, src) { // a table (not parsed here): its rows as written
			r.verbatim(n.Lines(), src, indent, lipgloss.NewStyle(), out)
			return
		}
		r.wrapped(r.inline(n, src), indent, w, out)
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		r.verbatim(n.Lines(), src, indent+"  ", r.st.fen, out)
	case *ast.HTMLBlock:
		r.verbatim(n.Lines(), src, indent, lipgloss.NewStyle(), out)
	case *ast.ThematicBreak:
		*out = append(*out, indent+r.st.quote.Render(strings.Repeat("─", min(w, 40))))
	case *ast.Blockquote:
		r.blocks(n, src, indent+r.st.quote.Render("│ "), out, false)
	case *ast.List:
		r.list(n, src, indent, out)
	default:
		r.blocks(n, src, indent, out, false)
	}
}

// list renders a list's items, each with its marker and the rest of the
// item indented under its first line.
func (r *mdRenderer) list(l *ast.List, src []byte, indent string, out *[]string) {
	num := l.Start
	for c := l.FirstChild(); c != nil; c = c.NextSibling() {
		if c != l.FirstChild() && !l.IsTight {
			*out = append(*out, "")
		}
		mark := "• "
		if l.IsOrdered() {
			mark = strconv.Itoa(num) + string(l.Marker) + " "
			num++
		}
		start := len(*out)
		pad := strings.Repeat(" ", ansi.StringWidth(mark))
		r.blocks(c, src, indent+pad, out, l.IsTight)
		if start == len(*out) {
			*out = append(*out, indent+mark)
			continue
		}
		(*out)[start] = indent + mark + strings.TrimPrefix((*out)[start], indent+pad)
	}
}

// wrapped wraps s to w cells under indent.
func (r *mdRenderer) wrapped(s, indent string, w int, out *[]string) {
	for _, l := range wrapLines(s, w) {
		*out = append(*out, indent+l)
	}
}

// verbatim appends lines as written (cut to the width, never wrapped).
func (r *mdRenderer) verbatim(lines *text.Segments, src []byte, indent string, st lipgloss.Style, out *[]string) {
	w := max(10, r.width-ansi.StringWidth(indent))
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		l := strings.TrimRight(string(seg.Value(src)), "\r\n")
		l = strings.ReplaceAll(l, "\t", "    ")
		*out = append(*out, indent+st.Render(truncate(l, w)))
	}
}

// tableLike reports whether every line of a paragraph starts with '|'.
func tableLike(n ast.Node, src []byte) bool {
	lines := n.Lines()
	if lines.Len() < 2 {
		return false
	}
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		if !strings.HasPrefix(strings.TrimSpace(string(seg.Value(src))), "|") {
			return false
		}
	}
	return true
}

// inline renders n's inline children to one styled string.
func (r *mdRenderer) inline(n ast.Node, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.span(c, src, &b)
	}
	return b.String()
}

func (r *mdRenderer) span(n ast.Node, src []byte, b *strings.Builder) {
	plain := !r.st.color
	switch n := n.(type) {
	case *ast.Text:
		b.Write(n.Segment.Value(src))
		switch {
		case n.HardLineBreak():
			b.WriteByte('\n')
		case n.SoftLineBreak():
			b.WriteByte(' ')
		}
	case *ast.String:
		b.Write(n.Value)
	case *ast.CodeSpan:
		s := r.inline(n, src)
		if plain {
			s = "`" + s + "`"
		}
		b.WriteString(r.st.code.Render(s))
	case *ast.Emphasis:
		s := r.inline(n, src)
		switch {
		case plain:
			m := strings.Repeat(string(emphasisMarker(n, src)), n.Level)
			b.WriteString(m + s + m)
		case n.Level >= 2:
			b.WriteString(r.st.strong.Render(s))
		default:
			b.WriteString(r.st.em.Render(s))
		}
	case *ast.Link:
		r.link(r.inline(n, src), string(n.Destination), b)
	case *ast.Image:
		r.link("image: "+r.inline(n, src), string(n.Destination), b)
	case *ast.AutoLink:
		b.WriteString(r.st.link.Render(string(n.URL(src))))
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.Write(seg.Value(src))
		}
	default:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			r.span(c, src, b)
		}
	}
}

// link writes a link's text and, when it is not the text, its target.
func (r *mdRenderer) link(label, dest string, b *strings.Builder) {
	switch {
	case dest == "" || dest == label:
		b.WriteString(r.st.link.Render(label))
	case label == "":
		b.WriteString(r.st.link.Render(dest))
	default:
		b.WriteString(label + " " + r.st.link.Render("("+dest+")"))
	}
}

// emphasisMarker is the character the emphasis was written with (* or _).
func emphasisMarker(n *ast.Emphasis, src []byte) byte {
	if t, ok := n.FirstChild().(*ast.Text); ok && t.Segment.Start > 0 {
		if c := src[t.Segment.Start-1]; c == '_' {
			return '_'
		}
	}
	return '*'
}
