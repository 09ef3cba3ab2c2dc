package tui

import "testing"

// TestCleanShowsHiddenText: TAG characters and zero-width characters in a
// child's words are shown escaped in the TUI, never passed raw (issue 23
// item 10).
func TestCleanShowsHiddenText(t *testing.T) {
	in := "All good.\U000E0053\U000E0041\U000E0059 zero\u200bwidth 👩\u200d💻"
	want := `All good.\U000e0053\U000e0041\U000e0059 zero\u200bwidth 👩` + "\u200d" + `💻`
	if got := clean(in, false); got != want {
		t.Errorf("clean = %q, want %q", got, want)
	}
	if got := firstLine(in, 200); got != want {
		t.Errorf("firstLine = %q, want %q", got, want)
	}
}
