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
			if got := ask("Bash", "rm -rf build", []string{"Bash(rm:*)"}); got != want {
				t.Errorf("input %q, answer %d: got %v want %v", c.in, i, got, want)
			}
		}
		if !strings.Contains(out.String(), `allow Bash rm -rf build ? [y/N]`) {
			t.Errorf("prompt not shown: %q", out.String())
		}
	}
}
