package spawn

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/registry"
)

// TestPrepareNewGivesBackTheInPlaceTurn: an auto writer counted in place
// whose preparation fails after the count (here its transcript to continue
// is missing) gives the turn back, so the next auto writer works in place
// and is not sent to a copy for "another writer working in place"
// (review36 P3-3).
func TestPrepareNewGivesBackTheInPlaceTurn(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	reg, _ := registry.Load(registry.Options{ProjectRoot: root, Home: home, Claude: true})
	d, err := New(Config{ProjectRoot: root, Workspace: root, Registry: reg, MaxDepth: 1, Exe: "/bin/true", Env: []string{"HOME=" + home},
		ParentTools: []string{"Read", "Edit", "Write", "Bash", "Glob", "Grep"}, Permissions: dispatch.Permissions{Mode: "acceptEdits"}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	def, ok := reg.Get("general-purpose")
	if !ok || def.ReadOnly {
		t.Fatalf("no writer agent general-purpose in the registry: %v", def)
	}
	req := call.Spec{Agent: def.Name, Prompt: "edit", Transcript: filepath.Join(t.TempDir(), "missing.jsonl")}
	_, err = d.prepareNew(t.Context(), req, def, call.Limits{}, "")
	if err == nil {
		t.Fatal("prepareNew continued a transcript that does not exist")
	}
	d.mu.Lock()
	n := d.inPlace
	d.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d writers counted in place after a preparation that failed, want 0", n)
	}
}
