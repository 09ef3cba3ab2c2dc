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
// user's configuration was watched. A file it may not read is kept by its
// mode, a directory it may not list by itself; the rest is watched. File
// modes bind only a user other than root: run as root, the test runs
// itself again as nobody.
func TestUserConfigSnapshotSkipsWhatItMayNotRead(t *testing.T) {
	if os.Getuid() == 0 {
		asNobody(t, "TestUserConfigSnapshotSkipsWhatItMayNotRead")
		return
	}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, cfg string)
		want   []string
	}{
		{"nothing changed", func(t *testing.T, cfg string) {}, nil},
		{"a readable file rewritten", func(t *testing.T, cfg string) {
			must(t, os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[pool]\nconcurrency = 99\n"), 0o644))
		}, []string{".config/brood/settings.toml"}},
		{"the unreadable file's mode", func(t *testing.T, cfg string) {
			must(t, os.Chmod(filepath.Join(cfg, "fleet", "trusted_workers"), 0o004))
		}, []string{".config/brood/fleet/trusted_workers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			cfg := filepath.Join(home, ".config", "brood")
			must(t, os.MkdirAll(filepath.Join(cfg, "fleet"), 0o755))
			must(t, os.MkdirAll(filepath.Join(cfg, "private", "inner"), 0o755))
			must(t, os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[pool]\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(cfg, "fleet", "trusted_workers"), []byte("brood-ed25519 AAAA w\n"), 0o000))
			must(t, os.Chmod(filepath.Join(cfg, "private"), 0o000))
			t.Cleanup(func() { _ = os.Chmod(filepath.Join(cfg, "private"), 0o755) })
			if _, err := os.ReadFile(filepath.Join(cfg, "fleet", "trusted_workers")); err == nil {
				t.Fatal("trusted_workers could be read: the test shows nothing")
			}
			c, err := SnapshotUserConfig(home)
			if err != nil {
				t.Fatalf("SnapshotUserConfig: %v; want what it may read watched", err)
			}
			tc.change(t, cfg)
			got, err := c.Changes()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Changes = %v, want %v", got, tc.want)
			}
		})
	}
}
