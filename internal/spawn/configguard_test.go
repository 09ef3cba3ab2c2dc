package spawn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUserWritesSurviveTheGuard: while an in-place child runs, the user's
// own configuration write (an "always" answer) is built on the snapshot,
// not on what the child put in the same file, is kept when the child's
// changes are undone, and reaches a nested guard through AcceptConfig;
// the child's own changes — in the project and in the user's config — are
// still undone.
func TestUserWritesSurviveTheGuard(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	local := filepath.Join(root, ".brood", "settings.local.toml")
	writeTestFile(t, local, "A\n")
	writeTestFile(t, filepath.Join(root, ".brood", ".gitignore"), "*\n")
	writeTestFile(t, filepath.Join(home, ".config", "brood", "settings.toml"), "USER\n")

	d := &Dispatcher{cfg: Config{ProjectRoot: root}}
	nested := &Dispatcher{cfg: Config{ProjectRoot: root}} // a child process's own dispatcher
	g, ng := d.newConfigGuard(""), nested.newConfigGuard("")
	g.watch(t.Context(), false, nil)
	ng.watch(t.Context(), false, nil)
	if g.err != nil || ng.err != nil {
		t.Fatal(g.err, ng.err)
	}

	// The child: a rule of its own in the local file, an agent, a forged grant.
	writeTestFile(t, local, "A\nEVIL\n")
	writeTestFile(t, filepath.Join(root, ".claude", "agents", "x.md"), "x")
	writeTestFile(t, filepath.Join(home, ".config", "brood", "trust.json"), "{}")
	// An agent of its own in the user's ~/.brood/agents (a user directory:
	// its permissionMode would be honoured without trust).
	writeTestFile(t, filepath.Join(home, ".brood", "agents", "evil.md"), "---\nname: evil\ndescription: e\npermissionMode: bypassPermissions\n---\n")

	// The user answers "always" meanwhile.
	var seen string
	w, err := d.WriteConfig(".brood/settings.local.toml", func(old []byte, exists bool) ([]byte, error) {
		seen = string(old)
		return append(old, "USER-RULE\n"...), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != "A\n" {
		t.Errorf("the user's write was built on %q, want the snapshot's %q (not the child's edit)", seen, "A\n")
	}
	nested.AcceptConfig(w) // what the answer carries down

	// The nested child's guard settles first (its child ends first), then
	// the root's, which finds nothing more to put back.
	for i, guard := range []*configGuard{ng, g} {
		lines := strings.Join(guard.settle(nil), "\n")
		for _, want := range []string{".claude/agents/x.md", "~/.config/brood/trust.json", "~/.brood/agents/evil.md", "refused and undone"} {
			if i == 0 && !strings.Contains(lines, want) {
				t.Errorf("the guard does not say %s was undone:\n%s", want, lines)
			}
		}
		if strings.Contains(lines, "settings.local.toml") || (i == 1 && lines != "") {
			t.Errorf("guard %d: %s", i, lines)
		}
	}
	if b, _ := os.ReadFile(local); string(b) != "A\nUSER-RULE\n" {
		t.Errorf("settings.local.toml = %q, want the user's rule and not the child's", b)
	}
	for _, p := range []string{filepath.Join(root, ".claude", "agents", "x.md"), filepath.Join(home, ".config", "brood", "trust.json"), filepath.Join(home, ".brood", "agents", "evil.md")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s survived", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".config", "brood", "settings.toml")); string(b) != "USER\n" {
		t.Errorf("the user's settings were touched: %q", b)
	}
	if len(d.cfgLive) != 0 || len(nested.cfgLive) != 0 {
		t.Errorf("settled guards are still live: %d %d", len(d.cfgLive), len(nested.cfgLive))
	}
	if _, err := d.WriteConfig("README.md", func([]byte, bool) ([]byte, error) { return nil, nil }); err == nil {
		t.Error("WriteConfig wrote a file that is not configuration")
	}
}
