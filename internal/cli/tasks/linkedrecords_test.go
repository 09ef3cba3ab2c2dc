package tasks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestLinkedRecordDirRefused (red team P2-5): a repository that commits
// .brood/sessions or .brood/workflows as a link does not get the user's
// transcripts or run records written where it points: the run refuses,
// naming the link, and nothing is written there.
func TestLinkedRecordDirRefused(t *testing.T) {
	for _, name := range []string{"sessions", "workflows", "outputs"} {
		t.Run(name, func(t *testing.T) {
			p := clitest.NewProject(t)
			spec := p.Script("s.yaml", "agents:\n  root:\n    - say: \"root done\"\n")
			elsewhere := t.TempDir()
			if err := os.Symlink(elsewhere, filepath.Join(p.Root, ".brood", name)); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := p.Brood("run", "--model", spec, "go")
			if code == 0 || !strings.Contains(errOut, filepath.Join(".brood", name)+" is a symbolic link") {
				t.Errorf("run: code %d\n%s\n%s", code, out, errOut)
			}
			if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
				t.Errorf("brood wrote through the link: %v", ents)
			}
		})
	}
}
