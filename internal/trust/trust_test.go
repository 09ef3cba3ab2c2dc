package trust

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestIsConfigPath(t *testing.T) {
	for rel, want := range map[string]bool{
		".brood/settings.toml": true, ".brood/agents/x.md": true, ".brood/.gitignore": true, ".brood": true,
		".claude/settings.json": true, ".claude/agents/helper.md": true, "sub/.claude/x": true, ".mcp.json": true,
		".brood/dispatch/01/result.json": false, ".brood/records/01.json": false, ".brood/sessions/a.jsonl": false,
		"README.md": false, "src/brood.go": false, "docs/.claudette": false,
	} {
		if got := IsConfigPath(rel); got != want {
			t.Errorf("IsConfigPath(%q) = %v, want %v", rel, got, want)
		}
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConfigRestore: every kind of change a child can make to the
// configuration in place is seen and undone; its own records are not.
func TestConfigRestore(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".brood", "settings.toml"), "max_turns = 5\n")
	write(t, filepath.Join(root, ".claude", "agents", "a.md"), "agent a\n")
	write(t, filepath.Join(root, ".claude", "settings.json"), "{}\n")
	write(t, filepath.Join(root, ".brood", "dispatch", "01", "result.json"), "{}")
	before, err := SnapshotConfig(root)
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	write(t, filepath.Join(root, ".brood", "settings.toml"), "[permissions]\nmode = \"bypassPermissions\"\n")
	write(t, filepath.Join(root, ".claude", "agents", "helper.md"), "tools: all\n")
	os.Remove(filepath.Join(root, ".claude", "settings.json"))
	os.RemoveAll(filepath.Join(root, ".claude", "agents", "a.md"))
	os.Symlink(outside, filepath.Join(root, ".claude", "hooks"))
	write(t, filepath.Join(root, ".brood", "dispatch", "01", "result.json"), "{\"x\":1}")
	write(t, filepath.Join(root, ".brood", "dispatch", "02", "envelope.json"), "{}")

	changed, err := before.Changes()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".brood/settings.toml", ".claude/agents/a.md", ".claude/agents/helper.md", ".claude/hooks", ".claude/settings.json"}
	if !slices.Equal(changed, want) {
		t.Fatalf("Changes = %q, want %q", changed, want)
	}
	if failed, err := before.Restore(changed); err != nil || len(failed) != 0 {
		t.Fatalf("Restore: %v %v", failed, err)
	}
	if again, _ := before.Changes(); len(again) != 0 {
		t.Fatalf("after Restore still changed: %q", again)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".brood", "dispatch", "01", "result.json")); string(b) != "{\"x\":1}" {
		t.Errorf("a record was restored too: %s", b)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the link's target was touched: %v", err)
	}
}

// TestConfigDirReplacedByLink: .claude swapped for a link is put back as a
// directory, and the link's target is left alone.
func TestConfigDirReplacedByLink(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".claude", "agents", "a.md"), "agent a\n")
	before, _ := SnapshotConfig(root)
	victim := t.TempDir()
	write(t, filepath.Join(victim, "keep.txt"), "mine")
	os.RemoveAll(filepath.Join(root, ".claude"))
	os.Symlink(victim, filepath.Join(root, ".claude"))
	changed, _ := before.Changes()
	if _, err := before.Restore(changed); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, ".claude", "agents", "a.md")); err != nil || string(b) != "agent a\n" {
		t.Errorf("not restored: %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(victim, "keep.txt")); string(b) != "mine" {
		t.Errorf("the link's target changed")
	}
}

func TestStoreAndHash(t *testing.T) {
	s := UserStore(t.TempDir())
	a := []File{{Rel: "a", Data: []byte("1")}, {Rel: "b", Data: []byte("2")}}
	b := []File{{Rel: "b", Data: []byte("2")}, {Rel: "a", Data: []byte("1")}}
	if Hash(a) != Hash(b) || Hash(a) == Hash([]File{{Rel: "a", Data: []byte("12")}}) {
		t.Fatal("Hash is not keyed to names and content alone")
	}
	if s.Trusted("/p", Hash(a)) {
		t.Fatal("empty store trusts")
	}
	if err := s.Grant("/p", Hash(a), []string{"a", "b"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !s.Trusted("/p", Hash(a)) || s.Trusted("/q", Hash(a)) || s.Trusted("/p", "other") {
		t.Fatal("Trusted answers wrong")
	}
	os.WriteFile(s.Path, []byte("junk"), 0o600)
	if s.Trusted("/p", Hash(a)) {
		t.Fatal("a corrupt store trusts")
	}
	if _, err := s.List(); err == nil {
		t.Fatal("a corrupt store lists without error")
	}
}
