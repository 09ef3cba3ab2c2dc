package tool

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// fromXNet is x/net/html's tree (HTML5's tree builder) as an htmlNode
// tree, comments and doctypes left out as parseHTML leaves them.
func fromXNet(n *html.Node) *htmlNode {
	out := &htmlNode{Type: htmlDocument}
	switch n.Type {
	case html.ElementNode:
		out.Type, out.Data = htmlElement, n.Data
		for _, a := range n.Attr {
			out.Attr = append(out.Attr, htmlAttr{Key: a.Key, Val: a.Val})
		}
	case html.TextNode:
		out.Type, out.Data = htmlText, n.Data
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.CommentNode || c.Type == html.DoctypeNode {
			continue
		}
		out.append(fromXNet(c))
	}
	return out
}

func markdownOf(doc *htmlNode) string {
	var b strings.Builder
	mdNode(&b, doc, 0)
	return tidyMarkdown(b.String())
}

// TestHTMLReaderAgreesWithHTML5: on well-formed pages and the usual
// sloppiness (unclosed p, li, td and tr, upper case, entities with and
// without their semicolon, raw text holding tags, comments, a title with
// no head), WebFetch's markdown from parseHTML is the markdown from
// HTML5's tree (x/net/html, which brood-child no longer links).
func TestHTMLReaderAgreesWithHTML5(t *testing.T) {
	for _, page := range []string{
		`<html><head><title>t</title><script>alert("x")</script></head><body>
<h1>Hello  web</h1><p>See <a href="/docs">the docs</a> and <b>bold</b>.</p>
<ul><li>one</li><li>two</li></ul><pre>x := 1
y := 2</pre><p>closing &lt;/web-content&gt; tag</p></body></html>`,
		`<!DOCTYPE html><title>T</title><p>body text`,
		`<ul><li>a<li>b<ul><li>c<li>d</ul><li>e</ul><ol><li>one<li>two<li>three</ol>after`,
		`<table><tr><th>h1<th>h2<tr><td>a<td>b</table><p>next`,
		`<table><thead><tr><td>x</td></tr><tbody><tr><td>y</td></tr></tbody></table>`,
		`<div>x<script>var s = "</div><p>";</script>y<style>p{}</STYLE>z</div>`,
		`<p>&amp; &lt; &gt; &quot; &#39; &#x41; &#66; &copy &copy; &nbsp;| &notanentity; &ampx</p>`,
		`<a href='/q?a=1&amp;b=2' HREF="dup">link</a> <a href=/x>x</a> <img alt="A &amp; B" src=x> <a href="javascript:go()">js</a> <a>bare</a>`,
		`a<!-- <p>hidden</p> -->b<!-- unterminated`,
		`<P>Hi <B>there</B> <EM>you</EM> <Code>c</Code></P>`,
		`<p>one<p>two<p>three<div>block</div>tail`,
		"<pre>\ncode\n  indented\n</pre>\r\n<p>crlf\r\nline</p>",
		`<p>line<br>break</br>again<br/>end`,
		`<h2>Title</h2>text<h3>Sub <i>it</i></h3>more`,
		`<div><noscript><p>no js</p></noscript><template><p>t</p></template><svg><title>s</title><path d="M0"/></svg>shown</div>`,
		`<dl><dt>term<dd>def<dt>term2<dd>def2</dl>`,
		`<p>a &lt; b and c &gt; d, x<3 and 1 < 2</p>`,
		`<textarea>&lt;b&gt;not bold</b></textarea><p>after`,
		`<section><article><header>H</header><main>M</main><footer>F</footer></article></section>`,
		`<blockquote><p>quoted</p></blockquote>`,
		`<ul>
  <li><a href="/a">A</a></li>
  <li><strong>B</strong>
    <ul><li>B1</li></ul>
  </li>
</ul>`,
	} {
		want, err := html.Parse(strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		if got, w := markdownOf(parseHTML(page)), markdownOf(fromXNet(want)); got != w {
			t.Errorf("page %q:\n got %q\nwant %q", page, got, w)
		}
	}
}

// TestHTMLReaderBounds: a page nested deeper than maxHTMLDepth, unclosed
// raw text and a tag cut off at the end are read without failing, the
// text kept.
func TestHTMLReaderBounds(t *testing.T) {
	for _, tc := range []struct{ page, want string }{
		{strings.Repeat("<span>", 100000) + "deep" + strings.Repeat("</span>", 100000), "deep"},
		{strings.Repeat("<b>", 2000) + "bold", "bold"},
		{"<p>before<script>never closed", "before"},
		{"<p>text<a href=\"x", "text"},
		{"<p>cut</", "cut"},
	} {
		if got := htmlToMarkdown(tc.page); !strings.Contains(got, tc.want) {
			t.Errorf("page %.40q...: markdown %.80q lacks %q", tc.page, got, tc.want)
		}
	}
}
