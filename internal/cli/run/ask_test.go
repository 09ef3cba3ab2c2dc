package run

import (
	"strings"
	"testing"
)

func TestAskerAnswers(t *testing.T) {
	cases := []struct {
		in   string
		want []bool
	}{
		{"y\nn\n", []bool{true, false}},
		{"YES\n\n", []bool{true, false}},
		{"yep\n", []bool{false}},
		{"", []bool{false}}, // end of input declines
	}
	for _, c := range cases {
		var out strings.Builder
		ask := newAsker(strings.NewReader(c.in), &out)
		for i, want := range c.want {
			if got := ask("Bash", "rm -rf build", "", []string{"Bash(rm:*)"}); got != want {
				t.Errorf("input %q, answer %d: got %v want %v", c.in, i, got, want)
			}
		}
		if !strings.Contains(out.String(), `allow Bash rm -rf build ? [y/N]`) {
			t.Errorf("prompt not shown: %q", out.String())
		}
	}
}

// TestAskerSaysWhy: the terminal prompt of `brood run` says why a call
// needs asking; for a command an allow rule covers by its prefix, that
// names the option that writes a file or runs a program.
func TestAskerSaysWhy(t *testing.T) {
	var out strings.Builder
	ask := newAsker(strings.NewReader("n\n"), &out)
	reason := `allow rule "Bash(git log:*)" covers the command but not --output, which writes a file (x.txt); a prefix rule covers only options known not to write files or run programs`
	ask("Bash", "git log --output=x.txt", reason, nil)
	if !strings.Contains(out.String(), "(asking: allow rule \"Bash(git log:*)\" covers the command but not --output, which writes a file") {
		t.Errorf("the prompt does not say which option made it ask: %q", out.String())
	}
}
