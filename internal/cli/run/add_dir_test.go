package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestAddDir: --add-dir names a directory the root works in: under
// acceptEdits a Write there is allowed as in the project (and refused
// without the flag), the system prompt names it, stream-json's init lists
// it; a directory that does not exist exits 1 naming it.
func TestAddDir(t *testing.T) {
	p := clitest.NewProject(t)
	extra := t.TempDir()
	target := filepath.Join(extra, "out.txt")
	mdl := p.Script("s.yaml", `agents:
  root:
    - tools:
        - Write: {file_path: `+target+`, content: "hi"}
    - say: "RESULT={{result 0}} SYSTEM={{.System}}"
`)
	code, out, errOut := p.Brood("-p", "--model", mdl, "--permission-mode", "acceptEdits", "--", "Write it.")
	if code != 0 || fileExists(target) {
		t.Fatalf("without --add-dir: exit %d, written %v: %s %s", code, fileExists(target), out, errOut)
	}
	code, out, errOut = p.Brood("-p", "--model", mdl, "--permission-mode", "acceptEdits", "--output-format", "stream-json", "--add-dir", extra, "--", "Write it.")
	if code != 0 || !fileExists(target) {
		t.Fatalf("with --add-dir: exit %d, not written: %s %s", code, out, errOut)
	}
	if !strings.Contains(out, `"additional_directories":["`+extra+`"]`) || !strings.Contains(out, "Additional working directories (--add-dir): "+extra) {
		t.Errorf("the init line or the system prompt does not name %s:\n%s", extra, out)
	}
	if strings.Contains(errOut, "accepted;") {
		t.Errorf("a note for a flag that works: %s", errOut)
	}
	// Default mode still asks (refused headless), as in Claude Code.
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := p.Brood("-p", "--model", mdl, "--add-dir", extra, "--", "Write it."); code != 0 || fileExists(target) {
		t.Errorf("default mode with --add-dir: exit %d, written %v", code, fileExists(target))
	}
	code, _, errOut = p.Brood("-p", "--model", mdl, "--add-dir", filepath.Join(extra, "nope"), "--", "x")
	if code != 1 || !strings.Contains(errOut, "brood: --add-dir: stat "+filepath.Join(extra, "nope")) {
		t.Errorf("missing --add-dir: exit %d, stderr %q", code, errOut)
	}
}
