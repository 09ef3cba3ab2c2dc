package codesnap_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/codesnap"
)

// TestPruneChains (issue 26, a tester's P3): a chain step's scratch
// repository lives under the cache's chains/ with its lock held; what a
// worker killed during a step left there (the change, the run's index,
// 47 MB in the tester's case, once under /tmp where nothing removed it) is
// removed by the cache's prune. A live step's, and one too young to have
// taken its lock, stay.
func TestPruneChains(t *testing.T) {
	dir := t.TempDir()
	cache := codesnap.Cache{Dir: dir}
	chains := filepath.Join(dir, "chains")
	old := time.Now().Add(-time.Hour)
	cases := []struct {
		name           string
		lock, held     bool
		young, removed bool
	}{
		{name: "left by a killed worker", lock: true, removed: true},
		{name: "killed before its lock", removed: true},
		{name: "a live step", lock: true, held: true},
		{name: "being made", young: true},
	}
	for _, tc := range cases {
		d := filepath.Join(chains, "chain-"+tc.name)
		if err := os.MkdirAll(filepath.Join(d, "g.git"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "change.patch"), []byte("diff\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if tc.lock {
			f, err := os.OpenFile(filepath.Join(d, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if tc.held {
				if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
					t.Fatal(err)
				}
			} else {
				f.Close()
			}
		}
		if !tc.young {
			if err := os.Chtimes(d, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cache.Prune(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		_, err := os.Stat(filepath.Join(chains, "chain-"+tc.name))
		if gone := os.IsNotExist(err); gone != tc.removed {
			t.Errorf("%s: removed %v; want %v", tc.name, gone, tc.removed)
		}
	}
}
