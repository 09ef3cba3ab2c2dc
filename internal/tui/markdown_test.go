package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestMarkdown renders the blocks a model writes, without colour (the
// markers stay, as written), at a width that wraps (30: 24 cells of text
// inside the margins).
func TestMarkdown(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"paragraphs", "one *two* **three** `four`\n\nfive\nsix", []string{
			"  one *two* **three**", "  `four`", "", "  five six"}},
		{"heading and list", "## Summary\nThe project is *tiny*:\n- one README\n- nothing else\n", []string{
			"  ## Summary", "", "  The project is *tiny*:", "", "  • one README", "  • nothing else"}},
		{"ordered and nested", "3. a\n4. b\n   - c\n", []string{
			"  3. a", "  4. b", "     • c"}},
		{"wrapped item", "- alpha beta gamma delta epsilon zeta eta theta", []string{
			"  • alpha beta gamma delta", "    epsilon zeta eta theta"}},
		{"fenced code", "```go\nfunc main() {\n\tx := 1\n}\n```", []string{
			"    func main() {", "        x := 1", "    }"}},
		{"quote and rule", "> said\n\n---\n", []string{"  │ said", "", "  " + strings.Repeat("─", 24)}},
		{"links", "[docs](https://x.test/d) <https://y.test>", []string{"  docs (https://x.test/d)", "  https://y.test"}},
		{"table as written", "| a | b |\n|---|---|\n| 1 | 2 |", []string{"  | a | b |", "  |---|---|", "  | 1 | 2 |"}},
		{"hard break", "a  \nb", []string{"  a", "  b"}},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := newMDRenderer(false, 30).render(tc.src)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("render(%q) =\n%q\nwant\n%q", tc.src, got, tc.want)
			}
			for _, l := range got {
				if ansi.StringWidth(l) > 30 {
					t.Errorf("line %q is wider than 30", l)
				}
			}
		})
	}
}

// TestMarkdownColour styles emphasis, code and headings with colour on and
// drops the markers; the words are the same.
func TestMarkdownColour(t *testing.T) {
	got := newMDRenderer(true, 80).render("# Title\n\nsome **bold** and `code`")
	plain := ansi.Strip(strings.Join(got, "\n"))
	if want := "  # Title\n\n  some bold and code"; plain != want {
		t.Errorf("coloured render without its styles = %q, want %q", plain, want)
	}
	if !hasColor(strings.Join(got, "\n")) {
		t.Errorf("coloured render has no colour: %q", got)
	}
}
