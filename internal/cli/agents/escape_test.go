package agents_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// hostile is what a cloned repository's text may hold that a terminal acts
// on or hides: an OSC title (BEL-terminated), a clear screen, a cursor
// move, an erase line, and a right-to-left override.
var hostile = []string{"\x1b", "\a", "\u202e"}

// TestAgentsEscapeRepositoryText: `brood agents`, `agents show` and
// `agents check`, run as brood is, write a project agent's description
// and a diagnostic quoting its value with the terminal's escapes taken
// out (termsafe), the text itself still there.
func TestAgentsEscapeRepositoryText(t *testing.T) {
	p := clitest.NewProject(t)
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "agents", "esc.md"),
		"---\nname: esc\ndescription: \"nice \\e]0;T\\a \\e[2J \\e[1A\\e[2K \\u202e gnp.exe\"\ntools: Read\n---\nBody.\n")
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "agents", "bad.md"),
		"---\nname: bad\ndescription: bad one\nmaxTurns: \"\\e[31mRED\\e[0m\"\n---\nBody.\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"agents"}, "nice"},
		{[]string{"agents", "show", "esc"}, "gnp.exe"},
		{[]string{"agents", "check"}, "RED"},
		{[]string{"agents", "--json"}, "nice"},
	}
	for _, tt := range tests {
		d := p.Start(nil, tt.args...)
		d.Wait(t)
		out := d.Stdout.String() + d.Stderr.String()
		if !strings.Contains(out, tt.want) {
			t.Errorf("brood %s: output lacks %q:\n%s", strings.Join(tt.args, " "), tt.want, out)
		}
		for _, h := range hostile {
			if strings.Contains(out, h) {
				t.Errorf("brood %s: output holds a raw %q:\n%q", strings.Join(tt.args, " "), h, out)
			}
		}
	}
}
