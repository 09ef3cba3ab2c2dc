package textline

import "testing"

func TestFirstSummaryClip(t *testing.T) {
	for _, tc := range []struct {
		in      string
		max     int
		first   string
		more    bool
		summary string
	}{
		{"", 0, "", false, ""},
		{"one line", 0, "one line", false, "one line"},
		{"\n\n  first  \nsecond\n", 0, "first", true, "first …"},
		{"exit status 1\r\nstderr", 0, "exit status 1", true, "exit status 1 …"},
		{"abcdef", 3, "abcdef", false, "abc…"},
		{"héllo wörld", 5, "héllo wörld", false, "héllo…"}, // runes, never half of one
		{"ab\ncd", 4, "ab", true, "ab …"},
		{"ab\ncd", 3, "ab", true, "ab …"},
	} {
		first, more := First(tc.in)
		if first != tc.first || more != tc.more {
			t.Errorf("First(%q) = %q, %v; want %q, %v", tc.in, first, more, tc.first, tc.more)
		}
		if got := Summary(tc.in, tc.max); got != tc.summary {
			t.Errorf("Summary(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.summary)
		}
	}
	if got := Clip("日本語テキスト", 3); got != "日本語…" {
		t.Errorf("Clip = %q", got)
	}
	if got := Clip("short", 0); got != "short" {
		t.Errorf("Clip(, 0) = %q", got)
	}
}
