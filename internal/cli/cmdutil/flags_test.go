package cmdutil

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestIsTerminal: /dev/null and a pipe are not terminals (a ModeCharDevice
// test takes /dev/null for one).
func TestIsTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, v := range map[string]any{"/dev/null": null, "pipe": r, "not a file": "x"} {
		if IsTerminal(v) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}

func TestSplitRules(t *testing.T) {
	got := SplitRules([]string{"Bash(git log:*) Edit,Read", " Bash(go test ./...) "})
	want := []string{"Bash(git log:*)", "Edit", "Read", "Bash(go test ./...)"}
	if !slices.Equal(got, want) {
		t.Errorf("SplitRules = %q, want %q", got, want)
	}
}

func TestResolveID(t *testing.T) {
	known := []string{"01M8S4EHT8AAAA", "01M8S4EHT8BBBB", "01M8S5ZZZZ"}
	for _, c := range []struct{ in, want, err string }{
		{"01M8S4EHT8AAAA", "01M8S4EHT8AAAA", ""},
		{"01m8s5", "01M8S5ZZZZ", ""},
		{"01M8S4EHT8B…", "01M8S4EHT8BBBB", ""},
		{"01M8S4EHT8", "", "ambiguous"},
		{"01X", "", "no task 01X"},
	} {
		got, err := ResolveID("task", c.in, known)
		if got != c.want || (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("ResolveID(%q) = %q, %v; want %q, %q", c.in, got, err, c.want, c.err)
		}
	}
}
