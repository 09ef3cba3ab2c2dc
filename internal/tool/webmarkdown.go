package tool

import (
	"strings"

	"golang.org/x/net/html"
)

// htmlToMarkdown turns an HTML page into plain markdown: headings, paragraphs,
// links, lists, emphasis and code survive; scripts, styles and other
// invisible parts are dropped.
func htmlToMarkdown(src string) string {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return src
	}
	var b strings.Builder
	mdNode(&b, doc, 0)
	return tidyMarkdown(b.String())
}

// mdSkip reports the elements whose content a reader never sees.
func mdSkip(tag string) bool {
	switch tag {
	case "script", "style", "noscript", "template", "head", "svg", "iframe", "object", "form", "button":
		return true
	}
	return false
}

func mdNode(b *strings.Builder, n *html.Node, depth int) {
	switch n.Type {
	case html.TextNode:
		b.WriteString(collapseSpace(n.Data))
		return
	case html.ElementNode:
	default:
		mdChildren(b, n, depth)
		return
	}
	tag := n.Data
	if mdSkip(tag) {
		return
	}
	switch tag {
	case "h1", "h2", "h3", "h4", "h5", "h6":
		b.WriteString("\n\n" + strings.Repeat("#", int(tag[1]-'0')) + " ")
		mdChildren(b, n, depth)
		b.WriteString("\n\n")
	case "p", "div", "section", "article", "main", "header", "footer", "table", "blockquote":
		b.WriteString("\n\n")
		mdChildren(b, n, depth)
		b.WriteString("\n\n")
	case "br":
		b.WriteString("\n")
	case "tr":
		b.WriteString("\n")
		mdChildren(b, n, depth)
	case "td", "th":
		b.WriteString(" | ")
		mdChildren(b, n, depth)
	case "ul", "ol":
		b.WriteString("\n")
		i := 0
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.Data == "li" {
				i++
				mark := "- "
				if tag == "ol" {
					mark = itoa(i) + ". "
				}
				b.WriteString("\n" + strings.Repeat("  ", depth) + mark)
				mdChildren(b, c, depth+1)
			}
		}
		b.WriteString("\n\n")
	case "a":
		var inner strings.Builder
		mdChildren(&inner, n, depth)
		text, href := strings.TrimSpace(inner.String()), attrOf(n, "href")
		if href == "" || strings.HasPrefix(strings.ToLower(href), "javascript:") {
			b.WriteString(text)
		} else {
			b.WriteString("[" + text + "](" + href + ")")
		}
	case "strong", "b":
		b.WriteString("**")
		mdChildren(b, n, depth)
		b.WriteString("**")
	case "em", "i":
		b.WriteString("_")
		mdChildren(b, n, depth)
		b.WriteString("_")
	case "code":
		b.WriteString("`")
		mdChildren(b, n, depth)
		b.WriteString("`")
	case "pre":
		b.WriteString("\n\n```\n" + strings.Trim(textOf(n), "\n") + "\n```\n\n")
	case "img":
		if alt := attrOf(n, "alt"); alt != "" {
			b.WriteString("[image: " + collapseSpace(alt) + "]")
		}
	default:
		mdChildren(b, n, depth)
	}
}

func mdChildren(b *strings.Builder, n *html.Node, depth int) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		mdNode(b, c, depth)
	}
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return strings.TrimSpace(a.Val)
		}
	}
	return ""
}

// textOf is the raw text below n, whitespace kept (for <pre>).
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func collapseSpace(s string) string {
	f := strings.Fields(s)
	out := strings.Join(f, " ")
	if len(f) > 0 && s != "" {
		if isSpace(s[0]) {
			out = " " + out
		}
		if isSpace(s[len(s)-1]) {
			out += " "
		}
	} else if s != "" {
		return " "
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// tidyMarkdown trims each line and keeps at most one blank line in a row.
func tidyMarkdown(s string) string {
	var out []string
	blank := true
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(l, " \t")
		if strings.TrimSpace(l) == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
