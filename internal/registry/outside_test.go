package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectAgentLinkOutside: a project agent file (or agents directory)
// that is a link to a file outside the project is not loaded, and says
// why; a link inside the project is, and so is a user agent linked from
// anywhere (the user's own files).
func TestProjectAgentLinkOutside(t *testing.T) {
	base := t.TempDir()
	root, home, elsewhere := filepath.Join(base, "proj"), filepath.Join(base, "home"), filepath.Join(base, "private")
	agent := func(name string) string {
		return "---\nname: " + name + "\ndescription: d\n---\nTOPSECRET " + name + "\n"
	}
	files := map[string]string{
		"private/sec.md":        agent("sec"),
		"private/dir/viadir.md": agent("viadir"),
		"private/mine.md":       agent("mine"),
		"proj/docs/inside.md":   agent("inside"),
	}
	for rel, text := range files {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(root, ".claude", "agents", "sec.md"):    filepath.Join(elsewhere, "sec.md"),
		filepath.Join(root, ".claude", "agents", "inside.md"): filepath.Join("..", "..", "docs", "inside.md"),
		filepath.Join(root, ".brood", "agents"):               filepath.Join(elsewhere, "dir"),
		filepath.Join(home, ".claude", "agents", "mine.md"):   filepath.Join(elsewhere, "mine.md"),
	}
	for l, target := range links {
		if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	reg, diags := Load(Options{ProjectRoot: root, Home: home, Claude: true})
	tests := []struct {
		name   string
		loaded bool
	}{{"sec", false}, {"viadir", false}, {"inside", true}, {"mine", true}}
	for _, tt := range tests {
		d, ok := reg.Get(tt.name)
		if ok != tt.loaded {
			t.Errorf("%s: loaded %v, want %v", tt.name, ok, tt.loaded)
		}
		if ok && !strings.Contains(d.Prompt, "TOPSECRET "+tt.name) {
			t.Errorf("%s: prompt %q", tt.name, d.Prompt)
		}
		if tt.loaded {
			continue
		}
		found := false
		for _, dg := range diags {
			found = found || (strings.HasSuffix(dg.Path, tt.name+".md") && strings.Contains(dg.Message, "outside the project"))
		}
		if !found {
			t.Errorf("%s: no diagnostic says it is outside the project: %v", tt.name, diags)
		}
	}
}
