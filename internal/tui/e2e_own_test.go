package tui_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTUIAlwaysIsYoursUntilEdited (review42 P1-2): the "always" answer
// brood writes into .brood/settings.local.toml is the person's own to the
// next run — in a git work tree or not (git's "untracked" is no longer
// the witness: brood's ledger of what it wrote is) — and once someone
// else edits the file, the next run holds it back with the trust line.
func TestTUIAlwaysIsYoursUntilEdited(t *testing.T) {
	for _, withGit := range []bool{true, false} {
		t.Run(map[bool]string{true: "git", false: "no git"}[withGit], func(t *testing.T) {
			p := newTUIProject(t, `agents:
  root:
    - tools:
        - Bash: {command: "touch a.txt"}
    - say: "ROOT-DONE"
`, map[string]string{
				".brood/b.yaml": "agents:\n  root:\n    - tools:\n        - Bash: {command: \"touch b.txt\"}\n    - say: \"ok\"\n",
				".brood/c.yaml": "agents:\n  root:\n    - tools:\n        - Bash: {command: \"touch c.txt\"}\n    - say: \"ok\"\n",
			})
			if !withGit {
				if err := os.RemoveAll(filepath.Join(p.root, ".git")); err != nil {
					t.Fatal(err)
				}
			}
			tm := p.open(t)
			tm.typeLine("go")
			tm.waitFor("asks to use Bash:", "touch a.txt", "y allow once")
			tm.keys("a")
			if sc := tm.waitFor("allowed always: Bash(touch:*)", "ROOT-DONE"); strings.Contains(sc, "brood trust") {
				t.Errorf("the answer was not noted as brood's own:\n%s", sc)
			}
			tm.exit()
			// headless runs the project's brood on script with nothing of
			// the test's environment.
			headless := func(script string) string {
				t.Helper()
				ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
				defer cancel()
				env := p.env(t)
				exe, err := os.Executable()
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.CommandContext(ctx, env[0], append(env[1:], exe, "run", "--model", "script:"+filepath.Join(p.root, ".brood", script), "go")...)
				cmd.Dir = p.root
				var errb bytes.Buffer
				cmd.Stderr = &errb
				if out, err := cmd.Output(); err != nil {
					t.Fatalf("brood run: %v\n%s\n%s", err, out, errb.String())
				}
				return errb.String()
			}
			if errs := headless("b.yaml"); strings.Contains(errs, "not applied") {
				t.Errorf("the file brood wrote was held back:\n%s", errs)
			}
			if _, err := os.Stat(filepath.Join(p.root, "b.txt")); err != nil {
				t.Errorf("the rule brood wrote did not allow touch in the next run: %v", err)
			}
			local := filepath.Join(p.root, ".brood", "settings.local.toml")
			b, err := os.ReadFile(local)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(local, append(b, "# edited by someone else\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
			errs := headless("c.yaml")
			if _, err := os.Stat(filepath.Join(p.root, "c.txt")); err == nil {
				t.Error("the edited local file's rule allowed touch with no trust")
			}
			if !strings.Contains(errs, ".brood/settings.local.toml") || !strings.Contains(errs, "brood trust") {
				t.Errorf("the trust line does not name the edited file and brood trust:\n%s", errs)
			}
		})
	}
}
