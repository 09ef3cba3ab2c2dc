package tasks

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTreeCutsToEightyColumns: a deep tree of long descriptions keeps
// every line within 80 columns, a cut one ending in …, the numbers whole.
func TestTreeCutsToEightyColumns(t *testing.T) {
	long := strings.Repeat("refactor the storage layer and its tests ", 4)
	leaf := &Node{Kind: "task", ID: "01KBN5Q7MZ8XRTABCDEFGHJKMN", Agent: "general-purpose", Status: "checkpoint", Description: long,
		WallMS: 754_000, TreeCostUSD: 12.3456, TreeCostComplete: true}
	leaf.TreeUsage.Input, leaf.TreeUsage.Output = 12_345_678, 9
	mid := &Node{Kind: "task", ID: "01KBN5Q7MZ8XRTQWERTYZZZZZZ", Agent: "lead", Status: "running", Description: long, Children: []*Node{leaf, leaf}}
	root := &Node{Kind: "session", ID: "01KBN5Q7MZ0000000000000000", Agent: "root", Status: "running", Children: []*Node{mid}}
	var b bytes.Buffer
	if err := writeTree(&b, []*Node{root}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[5], "- no price") {
		t.Fatalf("want a header, four rows and the note on a cost without a price:\n%s", b.String())
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	for _, want := range []string{"└─ lead 01KBN5Q7MZ8XRTQW  refactor", "…", "checkpoint", "12M", "12m34s", "$12.35"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("tree lacks %q:\n%s", want, b.String())
		}
	}
}
