package registry

import "testing"

// TestFoldSpellings: the spellings authors use for one key or tool fold to
// one name.
func TestFoldSpellings(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"maxTurns", "maxturns"}, {"max_turns", "maxturns"}, {"max-turns", "maxturns"},
		{"Max_Turns", "maxturns"}, {"permissionMode", "permissionmode"}, {"", ""},
	} {
		if got := fieldKey(tc.in); got != tc.want {
			t.Errorf("fieldKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"Multi_Edit", "Edit"}, {"web-fetch", "WebFetch"}, {"Task Output", "TaskOutput"}, {"AGENT", "Task"}, {"ls", "LS"},
	} {
		if got, ok := lookupTool(tc.in); !ok || got.name != tc.want {
			t.Errorf("lookupTool(%q) = %+v, %v; want %s", tc.in, got, ok, tc.want)
		}
	}
}

// BenchmarkLoadBuiltins is the registry's share of every root's start:
// the built-in agents parsed.
func BenchmarkLoadBuiltins(b *testing.B) {
	for b.Loop() {
		if _, err := Parse("r.md", []byte("---\nname: r\ndescription: d\ntools: Read, Glob, Grep, LS, Bash, WebFetch\nmax_turns: 3\n---\nYou.\n"), SourceProject); err != nil {
			b.Fatal(err)
		}
	}
}
