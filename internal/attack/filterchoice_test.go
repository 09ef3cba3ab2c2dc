package attack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInPlaceWriterChoosesNoFilter (review29 P2-3): an in-place writer's
// .gitattributes name a filter the user configured (in ~/.gitconfig, as
// git-lfs is) that the repository's HEAD does not: the parent's git on the
// tree (the writer's before/after snapshot, the next isolated child's
// spawn snapshot and landing) never runs it, unconfined, on what the
// writer wrote.
func TestInPlaceWriterChoosesNoFilter(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n", "a.txt": "a\n"})
	ran := filepath.Join(t.TempDir(), "ran")
	probe := filepath.Join(t.TempDir(), "probe.sh")
	writeFile(t, probe, "#!/bin/bash\ngp=$(cut -d' ' -f4 /proc/$PPID/stat)\necho \"clean git=[$(tr '\\\\0' ' ' < /proc/$PPID/cmdline | cut -c1-400)] parent=[$(tr '\\\\0' ' ' < /proc/$gp/cmdline | cut -c1-60)] landlock=$(grep -c . /proc/self/attr/current 2>/dev/null)\" >> "+ran+"\ncat\n")
	os.Chmod(probe, 0o755)
	writeFile(t, filepath.Join(p.home, ".gitconfig"), "[filter \"probe\"]\n\tclean = "+probe+"\n")
	writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "inplace.md"),
		"---\nname: inplace\ndescription: in-place writer\ntools: Bash\nisolation: none\n---\nWrite.\n")
	writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
		"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
	mdl := p.script("f.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: inplace, description: attrs, prompt: "attrs"}
    - tools:
        - Task: {subagent_type: iso, description: next, prompt: "next"}
    - say: "root done"
  inplace:
    - tools:
        - Bash: {command: "printf '* filter=probe\\n' > .gitattributes; echo child > a.txt; echo new > b.txt; echo tried > tried.txt"}
    - say: "W done"
  iso:
    - tools:
        - Bash: {command: "echo iso > c.txt"}
    - say: "I done"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") || readOr(filepath.Join(p.root, "tried.txt")) != "tried\n" {
		t.Fatalf("the run did not reach its scenario: code %d\n%s\n%s", code, out, errs)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Errorf("the parent ran the user's filter the in-place writer's .gitattributes chose:\n%s", b)
	}
}
