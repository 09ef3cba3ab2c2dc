package spawn_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/sandbox"
)

// TestSharedCopyStartsNoWriter (review32 P3-2): a dispatcher on a copy
// other calls share (a fleet worker's checkout of a base, which a
// read-only call reads as it is: ReadOnlyIn) runs a read-only agent there,
// and refuses a writer, which writes nothing of it. Given that checkout as
// its copy root (In(dir, dir, nil)) a writer was confined to it, so it
// could write it, under every later call's overlay.
func TestSharedCopyStartsNoWriter(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("this kernel has no Landlock")
	}
	script := `
agents:
  explore:
    - tools: [{Bash: {command: "cat base.txt"}}]
    - say: "read: {{result 0}}"
  general-purpose:
    - tools: [{Bash: {command: "echo x > base.txt; echo y > new.txt; echo wrote"}}]
    - say: "wrote: {{result 0}}"
`
	p := newProject(t, script, nil)
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	shared := filepath.Join(p.home, ".cache", "brood", "fleet", "checkout")
	must(t, os.MkdirAll(shared, 0o755))
	git(t, shared, "init", "-q")
	must(t, os.WriteFile(filepath.Join(shared, "base.txt"), []byte("base\n"), 0o644))
	git(t, shared, "add", "-A")
	git(t, shared, "commit", "-qm", "base")
	d, err := p.dispatcher(p.settings(nil), 1, nil).ReadOnlyIn(shared)
	must(t, err)

	out, err := d.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "read"})
	must(t, err)
	if !strings.Contains(out.Text, "read: base") {
		t.Errorf("the read-only agent did not read the shared copy:\n%s", out.Text)
	}
	out, err = d.Call(context.Background(), call.Spec{Agent: "general-purpose", Prompt: "write"})
	must(t, err)
	if out.Status != "failed" || !strings.Contains(out.Error, "shared with other calls") {
		t.Errorf("a writer on the shared copy: status %q, %q; want it refused\n%s", out.Status, out.Error, out.Text)
	}
	b, _ := os.ReadFile(filepath.Join(shared, "base.txt"))
	if _, nerr := os.Lstat(filepath.Join(shared, "new.txt")); nerr == nil || string(b) != "base\n" {
		t.Errorf("the writer wrote the shared copy: base.txt %q, new.txt there: %v", b, nerr == nil)
	}
}
