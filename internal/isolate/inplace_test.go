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

// TestInPlaceViewHoldsMissingGitBrood: a checkout with no .git/brood yet
// (brood's records: sent starts, landings) gets an empty one before an
// in-place writer's spawn, held read-only, so the writer cannot plant it
// as a link into the work tree (review31 P2-1); a link is never held.
func TestInPlaceViewHoldsMissingGitBrood(t *testing.T) {
	for _, tc := range []struct {
		name     string
		make     func(t *testing.T, git string)
		wantHeld bool
	}{
		{"absent", func(t *testing.T, git string) {}, true},
		{"present", func(t *testing.T, git string) {
			if err := os.MkdirAll(filepath.Join(git, "brood", "fleet"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"link", func(t *testing.T, git string) {
			if err := os.Symlink("../notes", filepath.Join(git, "brood")); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			git := filepath.Join(root, ".git")
			if err := os.Mkdir(git, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.make(t, git)
			MakeToHold(root, root)
			v := InPlaceView(root, root)
			p := filepath.Join(git, "brood")
			if got := slices.Contains(v.ReadOnly, p); got != tc.wantHeld {
				t.Errorf("ReadOnly = %q: holds %s = %v, want %v", v.ReadOnly, p, got, tc.wantHeld)
			}
		})
	}
}
