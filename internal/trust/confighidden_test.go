package trust

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestUserConfigSnapshotSkipsWhatItMayNotRead (review33 P3-1): a fleet
// grandchild's dispatcher snapshots the user's configuration under a
// sandbox that hides some of it (~/.config/brood/fleet/trusted_workers:
// permission denied), and the whole snapshot failed: nothing of the
// user's configuration was watched. Confined, a file it may not read at
// the snapshot is kept by its mode, a directory by itself; the rest is
// watched. What it could read at the snapshot and cannot after (a
// writer's chmod 0300 on a directory it planted in) is an error, never
// skipped (review35 P1-1), and the root takes any refusal as one. File
// modes bind only a user other than root: run as root, the test runs
// itself again as nobody.
func TestUserConfigSnapshotSkipsWhatItMayNotRead(t *testing.T) {
	if os.Getuid() == 0 {
		asNobody(t, "TestUserConfigSnapshotSkipsWhatItMayNotRead")
		return
	}
	for _, tc := range []struct {
		name     string
		root     bool // the root's snapshot, not a confined one
		change   func(t *testing.T, cfg string)
		want     []string
		snapErr  bool
		afterErr bool
	}{
		{"nothing changed", false, func(t *testing.T, cfg string) {}, nil, false, false},
		{"a readable file rewritten", false, func(t *testing.T, cfg string) {
			must(t, os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[pool]\nconcurrency = 99\n"), 0o644))
		}, []string{".config/brood/settings.toml"}, false, false},
		{"the unreadable file's mode", false, func(t *testing.T, cfg string) {
			must(t, os.Chmod(filepath.Join(cfg, "fleet", "trusted_workers"), 0o004))
		}, []string{".config/brood/fleet/trusted_workers"}, false, false},
		{"a file planted in a directory made unlistable after", false, func(t *testing.T, cfg string) {
			must(t, os.WriteFile(filepath.Join(cfg, "agents", "evil.md"), []byte("---\nname: general-purpose\n---\n"), 0o644))
			must(t, os.Chmod(filepath.Join(cfg, "agents"), 0o300))
		}, nil, false, true},
		{"the root's snapshot", true, func(t *testing.T, cfg string) {}, nil, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			cfg := filepath.Join(home, ".config", "brood")
			must(t, os.MkdirAll(filepath.Join(cfg, "fleet"), 0o755))
			must(t, os.MkdirAll(filepath.Join(cfg, "agents"), 0o755))
			must(t, os.MkdirAll(filepath.Join(cfg, "private", "inner"), 0o755))
			must(t, os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[pool]\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(cfg, "fleet", "trusted_workers"), []byte("brood-ed25519 AAAA w\n"), 0o000))
			must(t, os.Chmod(filepath.Join(cfg, "private"), 0o000))
			t.Cleanup(func() {
				_ = os.Chmod(filepath.Join(cfg, "private"), 0o755)
				_ = os.Chmod(filepath.Join(cfg, "agents"), 0o755)
			})
			if _, err := os.ReadFile(filepath.Join(cfg, "fleet", "trusted_workers")); err == nil {
				t.Fatal("trusted_workers could be read: the test shows nothing")
			}
			snap := SnapshotUserConfigConfined
			if tc.root {
				snap = SnapshotUserConfig
			}
			c, err := snap(home)
			if (err != nil) != tc.snapErr {
				t.Fatalf("snapshot: %v; want an error %v", err, tc.snapErr)
			}
			if err != nil {
				return
			}
			tc.change(t, cfg)
			got, err := c.Changes()
			if (err != nil) != tc.afterErr {
				t.Fatalf("Changes = %v, %v; want an error %v", got, err, tc.afterErr)
			}
			if err == nil && !slices.Equal(got, tc.want) {
				t.Errorf("Changes = %v, want %v", got, tc.want)
			}
		})
	}
}
