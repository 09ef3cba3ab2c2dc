package interactive_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli"
)

// Without a terminal, bare brood prints the help as it always has, and the
// interactive flags say they need one.
func TestNoTerminal(t *testing.T) {
	t.Chdir(t.TempDir())
	cases := []struct {
		args []string
		code int
		want string
	}{
		{nil, 0, "Start with:"},
		{[]string{"--continue"}, 1, "needs a terminal"},
		{[]string{"--resume", "01ABC"}, 1, "needs a terminal"},
		// The depth flags are the interactive mode's too (brood run has
		// them as well): taken, not an unknown flag.
		{[]string{"--continue", "--max-subagent-depth", "2"}, 1, "needs a terminal"},
		{[]string{"--continue", "--enable-subagents"}, 1, "needs a terminal"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := cli.Main(t.Context(), cli.IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}, c.args)
		if code != c.code || !strings.Contains(out.String()+errb.String(), c.want) {
			t.Errorf("brood %v: code %d, stdout %q, stderr %q", c.args, code, out.String(), errb.String())
		}
	}
}
