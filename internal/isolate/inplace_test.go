package isolate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestInPlaceViewHoldsMissingClaude: a work tree with no .claude gets an
// empty one, held read-only, so an in-place writer cannot make a
// .claude/settings.local.json the user's other sessions would take for
// the user's own; an existing one is left as it is, and a link is never
// held (nor replaced).
func TestInPlaceViewHoldsMissingClaude(t *testing.T) {
	for _, tc := range []struct {
		name     string
		make     func(t *testing.T, root string)
		wantHeld bool
	}{
		{"absent", func(t *testing.T, root string) {}, true},
		{"present", func(t *testing.T, root string) {
			if err := os.WriteFile(filepath.Join(root, ".claude"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"link", func(t *testing.T, root string) {
			if err := os.Symlink(t.TempDir(), filepath.Join(root, ".claude")); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.make(t, root)
			MakeToHold(root, root)
			v := InPlaceView(root, root)
			p := filepath.Join(root, ".claude")
			if got := slices.Contains(v.ReadOnly, p); got != tc.wantHeld {
				t.Errorf("ReadOnly = %q: holds %s = %v, want %v", v.ReadOnly, p, got, tc.wantHeld)
			}
			if _, err := os.Lstat(p); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		})
	}
}

// TestInPlaceViewAllowingConfig: with agents.allow_config_changes the
// writer's view leaves .claude and .mcp.json writable, and still holds
// .brood and git's configuration.
func TestInPlaceViewAllowingConfig(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".claude", ".brood", ".git/hooks"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".mcp.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := InPlaceView(root, root).AllowingConfig(root, root)
	for p, want := range map[string]bool{".claude": false, ".mcp.json": false, ".brood": true, ".git/hooks": true} {
		if got := slices.Contains(v.ReadOnly, filepath.Join(root, p)); got != want {
			t.Errorf("%s held read-only = %v, want %v (ReadOnly %q)", p, got, want, v.ReadOnly)
		}
	}
}

// TestInPlaceViewMakesNoGitBrood: brood keeps no record under the git
// dir (taskdir.CheckoutState), so an in-place writer's view neither makes
// a .git/brood in the user's repository nor holds one (review34 P2-1:
// where no kernel held it a writer wrote plain records there); the
// entries whose absence git reads as nothing are still made and held.
func TestInPlaceViewMakesNoGitBrood(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, git string)
	}{
		{"absent", func(t *testing.T, git string) {}},
		{"present", func(t *testing.T, git string) {
			if err := os.MkdirAll(filepath.Join(git, "brood", "fleet"), 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			git := filepath.Join(root, ".git")
			if err := os.Mkdir(git, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.make(t, git)
			_, had := os.Lstat(filepath.Join(git, "brood"))
			MakeToHold(root, root)
			v := InPlaceView(root, root)
			p := filepath.Join(git, "brood")
			if slices.Contains(v.ReadOnly, p) {
				t.Errorf("ReadOnly = %q holds %s", v.ReadOnly, p)
			}
			if _, err := os.Lstat(p); (err == nil) != (had == nil) {
				t.Errorf("MakeToHold changed %s: %v", p, err)
			}
			if !slices.Contains(v.ReadOnly, filepath.Join(git, "modules")) {
				t.Errorf("ReadOnly = %q: .git/modules not made and held", v.ReadOnly)
			}
		})
	}
}
