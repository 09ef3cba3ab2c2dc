package tool

import (
	"html"
	"strings"
)

// A small HTML reader for WebFetch's markdown: elements, attributes and
// text as a browser would show them, without golang.org/x/net/html, whose
// entity tables are built at package init in every process that links
// this package (every subagent; 0.1 ms and 126 KB). What the markdown
// uses is what it must get right: raw-text elements (a script's "</div>"
// is not a tag), entities (the standard library's html, whose tables are
// built at first use), end tags closing what they name, and a list item
// or table cell closing the one before it. Misnested markup is closed as
// it comes, not re-parented as HTML5's tree builder would; the markdown
// of such a page may differ in where a line breaks.

type htmlNodeType int

const (
	htmlDocument htmlNodeType = iota
	htmlElement
	htmlText
)

type htmlAttr struct{ Key, Val string }

type htmlNode struct {
	Type                    htmlNodeType
	Data                    string // an element's lowercase name, or the text
	Attr                    []htmlAttr
	FirstChild, NextSibling *htmlNode
	lastChild               *htmlNode
}

func (n *htmlNode) append(c *htmlNode) {
	if n.lastChild == nil {
		n.FirstChild = c
	} else {
		n.lastChild.NextSibling = c
	}
	n.lastChild = c
}

// maxHTMLDepth bounds the elements open at once: a page is not trusted
// to bound its own nesting (the markdown walk recurses).
const maxHTMLDepth = 512

func htmlVoid(tag string) bool {
	switch tag {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr", "keygen":
		return true
	}
	return false
}

// htmlRawText: elements whose content is text up to their end tag;
// rcdata ones (title, textarea) have entities decoded.
func htmlRawText(tag string) (raw, rcdata bool) {
	switch tag {
	case "script", "style", "xmp", "iframe", "noembed", "noframes", "noscript":
		return true, false
	case "title", "textarea":
		return true, true
	}
	return false, false
}

// htmlCloses are, for an element that closes an open one of its kind
// (p, li, table parts), the open elements it closes, searched down to the
// first one of stop.
func htmlCloses(tag string) (closes []string, stop []string) {
	switch tag {
	case "li":
		return []string{"li"}, []string{"ul", "ol", "menu"}
	case "dt", "dd":
		return []string{"dt", "dd"}, []string{"dl"}
	case "td", "th":
		return []string{"td", "th"}, []string{"tr", "table"}
	case "tr":
		return []string{"tr", "td", "th"}, []string{"table", "thead", "tbody", "tfoot"}
	case "thead", "tbody", "tfoot":
		return []string{"thead", "tbody", "tfoot", "tr", "td", "th"}, []string{"table"}
	case "option":
		return []string{"option"}, []string{"select", "datalist"}
	case "p", "div", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table", "blockquote", "section", "article", "header", "footer", "main", "nav", "aside", "dl", "hr", "form", "figure":
		return []string{"p"}, []string{"button", "table", "td", "th", "caption", "object", "template", "marquee", "applet"}
	}
	return nil, nil
}

// htmlParser builds the tree: the open elements, how many of each name
// are open (so an end tag or a closing start tag with nothing to close
// costs no walk down the stack), and the text not yet made a node.
type htmlParser struct {
	stack []*htmlNode
	open  map[string]int
	text  strings.Builder
}

func (p *htmlParser) top() *htmlNode { return p.stack[len(p.stack)-1] }

// flush makes the pending text a node of the current element.
func (p *htmlParser) flush() {
	if p.text.Len() > 0 {
		p.top().append(&htmlNode{Type: htmlText, Data: p.text.String()})
		p.text.Reset()
	}
}

func (p *htmlParser) push(n *htmlNode) {
	p.stack = append(p.stack, n)
	p.open[n.Data]++
}

// popTo pops the elements above depth j (the element at j included).
func (p *htmlParser) popTo(j int) {
	for _, n := range p.stack[j:] {
		p.open[n.Data]--
	}
	p.stack = p.stack[:j]
}

// parseHTML reads src into a tree; it never fails.
func parseHTML(src string) *htmlNode {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	doc := &htmlNode{Type: htmlDocument}
	p := &htmlParser{stack: []*htmlNode{doc}, open: map[string]int{}}
	for src != "" {
		i := strings.IndexByte(src, '<')
		if i < 0 {
			p.text.WriteString(html.UnescapeString(src))
			break
		}
		p.text.WriteString(html.UnescapeString(src[:i]))
		src = src[i:]
		switch {
		case strings.HasPrefix(src, "<!--"):
			p.flush() // a comment parts the text around it, as a browser's tree has it
			src = skipPast(src[4:], "-->")
		case strings.HasPrefix(src, "<!") || strings.HasPrefix(src, "<?"):
			p.flush()
			src = skipPast(src[2:], ">")
		case strings.HasPrefix(src, "</") && len(src) > 2 && isASCIILetter(src[2]):
			p.flush()
			name, rest := tagName(src[2:])
			src = skipPast(rest, ">")
			p.endTag(name)
		case len(src) > 1 && isASCIILetter(src[1]):
			p.flush()
			src = p.startTag(src[1:])
		default:
			p.text.WriteByte('<')
			src = src[1:]
		}
	}
	p.flush()
	return doc
}

func (p *htmlParser) endTag(name string) {
	if name == "br" { // </br> is a <br>, as a browser reads it
		p.top().append(&htmlNode{Type: htmlElement, Data: "br"})
		return
	}
	if p.open[name] == 0 {
		return
	}
	for j := len(p.stack) - 1; j > 0; j-- {
		if p.stack[j].Data == name {
			p.popTo(j)
			return
		}
	}
}

// startTag reads a start tag after its '<' and what raw text follows it;
// it returns the rest of the page.
func (p *htmlParser) startTag(src string) string {
	n, src := readStartTag(src)
	if closes, stop := htmlCloses(n.Data); closes != nil {
		p.closeOpen(closes, stop)
	}
	p.top().append(n)
	if raw, rcdata := htmlRawText(n.Data); raw {
		body, after := rawText(src, n.Data)
		if rcdata {
			body = html.UnescapeString(body)
		}
		if body != "" {
			n.append(&htmlNode{Type: htmlText, Data: body})
		}
		return after
	}
	if n.Data == "plaintext" {
		n.append(&htmlNode{Type: htmlText, Data: src})
		return ""
	}
	if !htmlVoid(n.Data) && len(p.stack) < maxHTMLDepth {
		p.push(n)
	}
	return src
}

// closeOpen pops the stack to below the nearest open element named in
// closes, if one is open above the nearest of stop.
func (p *htmlParser) closeOpen(closes, stop []string) {
	some := false
	for _, c := range closes {
		some = some || p.open[c] > 0
	}
	if !some {
		return
	}
	for j := len(p.stack) - 1; j > 0; j-- {
		d := p.stack[j].Data
		for _, c := range closes {
			if d == c {
				p.popTo(j)
				return
			}
		}
		for _, s := range stop {
			if d == s {
				return
			}
		}
	}
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isTagSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\f' || c == '\r' }

// tagName reads a tag's name, lowercased, up to space, '/' or '>'.
func tagName(s string) (string, string) {
	i := 0
	for i < len(s) && !isTagSpace(s[i]) && s[i] != '/' && s[i] != '>' {
		i++
	}
	return strings.ToLower(s[:i]), s[i:]
}

// readStartTag reads a start tag after its '<': its name and attributes (a
// repeated one kept first, values unescaped), through its '>'.
func readStartTag(s string) (*htmlNode, string) {
	name, s := tagName(s)
	n := &htmlNode{Type: htmlElement, Data: name}
	for {
		for s != "" && (isTagSpace(s[0]) || s[0] == '/') {
			s = s[1:]
		}
		if s == "" {
			return n, ""
		}
		if s[0] == '>' {
			return n, s[1:]
		}
		i := 1 // a name may start with '='
		for i < len(s) && !isTagSpace(s[i]) && s[i] != '/' && s[i] != '>' && s[i] != '=' {
			i++
		}
		key := strings.ToLower(s[:i])
		s = strings.TrimLeft(s[i:], " \n\t\f\r")
		val := ""
		if strings.HasPrefix(s, "=") {
			s = strings.TrimLeft(s[1:], " \n\t\f\r")
			if s != "" && (s[0] == '"' || s[0] == '\'') {
				end := strings.IndexByte(s[1:], s[0])
				if end < 0 {
					val, s = s[1:], ""
				} else {
					val, s = s[1:1+end], s[2+end:]
				}
			} else {
				j := 0
				for j < len(s) && !isTagSpace(s[j]) && s[j] != '>' {
					j++
				}
				val, s = s[:j], s[j:]
			}
		}
		if n.attr(key) == nil {
			n.Attr = append(n.Attr, htmlAttr{Key: key, Val: html.UnescapeString(val)})
		}
	}
}

func (n *htmlNode) attr(key string) *htmlAttr {
	for i := range n.Attr {
		if n.Attr[i].Key == key {
			return &n.Attr[i]
		}
	}
	return nil
}

// rawText is a raw-text element's content, up to its end tag (any case),
// and what follows that tag.
func rawText(s, tag string) (string, string) {
	for from := 0; ; {
		i := strings.Index(s[from:], "</")
		if i < 0 {
			return s, ""
		}
		i += from
		after := i + 2 + len(tag)
		if after <= len(s) && strings.EqualFold(s[i+2:after], tag) &&
			(after == len(s) || isTagSpace(s[after]) || s[after] == '/' || s[after] == '>') {
			return s[:i], skipPast(s[after:], ">")
		}
		from = i + 2
	}
}

// skipPast is what follows the first end in s, or "" if there is none.
func skipPast(s, end string) string {
	if i := strings.Index(s, end); i >= 0 {
		return s[i+len(end):]
	}
	return ""
}
