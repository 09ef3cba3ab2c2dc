package registry

import (
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"
)

func TestRosterDeterministic(t *testing.T) {
	long := strings.Repeat("word ", 100)
	fsys := fstest.MapFS{
		"z.md":   agentFile("zeta", "Last one."),
		"a.md":   agentFile("Alpha", "First line\\n\\nSecond paragraph."),
		"m.md":   agentFile("mid", "Use it for X. Examples: <example>user: hi</example>"),
		"l.md":   agentFile("long", long),
		"b/c.md": {Data: []byte("---\nname: beta\ndescription: |\n  Para one\n  continues.\n\n  Para two.\n---\n")},
	}
	load := func() string {
		reg, diags := LoadDirs(fstest.MapFS{}, Dir{Path: "p", FS: fsys, Source: SourceProject})
		if HasErrors(diags) {
			t.Fatal(diags)
		}
		return reg.Roster()
	}
	first := load()
	for i := 0; i < 20; i++ {
		if again := load(); again != first {
			t.Fatalf("roster changed between loads:\n%s\n---\n%s", first, again)
		}
	}
	lines := strings.Split(strings.TrimSuffix(first, "\n"), "\n")
	want := []string{
		"- Alpha: First line",
		"- beta: Para one continues.",
		"- long: ",
		"- mid: Use it for X. Examples:",
		"- zeta: Last one.",
	}
	if len(lines) != len(want) {
		t.Fatalf("roster:\n%s", first)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want prefix %q", i, lines[i], w)
		}
	}
	if n := len(lines[2]) - len("- long: "); n > rosterDescriptionLimit || !strings.HasSuffix(lines[2], "…") {
		t.Errorf("long description not bounded: %d bytes %q", n, lines[2])
	}
	if lines[3] != "- mid: Use it for X. Examples:" {
		t.Errorf("mid = %q, want the text before <example>", lines[3])
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"one two three four five", 12, "one two…"},
		{"ααααα", 5, "α…"},
		{"abc", 0, "…"},
		{"a\n\nb", 10, "a"},
		{"  spaced \t out\nlines ", 40, "spaced out lines"},
	}
	for _, tt := range tests {
		got := Summary(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("Summary(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Summary(%q) is not valid UTF-8", tt.in)
		}
	}
}
