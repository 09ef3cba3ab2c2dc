package spawn

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/trust"
)

// TestCrashedGuardRecordJunk: only regular files named <task id>.<pid>.json
// of at most 1 MiB, in a guards directory that is not a link, are acted on;
// the rest is left as it is, unread.
func TestCrashedGuardRecordJunk(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", "")
	for _, tc := range []struct {
		name    string
		spoil   func(t *testing.T, dir, file string) // after a sealed record is written as file in dir
		putBack bool
	}{
		{"plain", func(*testing.T, string, string) {}, true},
		{"other name", func(t *testing.T, dir, file string) {
			rename(t, filepath.Join(dir, file), filepath.Join(dir, "x"+file))
		}, false},
		{"over 1 MiB", func(t *testing.T, dir, file string) {
			b, _ := os.ReadFile(filepath.Join(dir, file))
			b = append(b, bytes.Repeat([]byte(" "), 1<<20)...) // valid JSON still
			if err := os.WriteFile(filepath.Join(dir, file), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"guards dir is a link", func(t *testing.T, dir, file string) {
			elsewhere := filepath.Join(t.TempDir(), "g")
			rename(t, dir, elsewhere)
			if err := os.Symlink(elsewhere, dir); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755); err != nil {
				t.Fatal(err)
			}
			state, err := trust.SnapshotPaths(root, []string{".git/hooks", ".git/commondir"})
			if err != nil {
				t.Fatal(err)
			}
			sr, _ := state.Record()
			planted := filepath.Join(root, ".git", "commondir")
			if err := os.WriteFile(planted, []byte("../evil\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(taskdir.Open(root).Records().Path(), guardsDir)
			rec := guardRecord{Version: guardRecordVersion, TaskID: taskdir.NewID(), Project: root, Owner: procID{PID: 1 << 30, Start: "1"}, States: []trust.StateRecord{sr}}
			if err := writeGuardRecord(dir, &rec); err != nil {
				t.Fatal(err)
			}
			tc.spoil(t, dir, guardRecordName(rec))
			lines := RestoreCrashedGuards(root)
			_, plantedErr := os.Lstat(planted)
			if tc.putBack != (plantedErr != nil) || tc.putBack != (len(lines) == 1) {
				t.Errorf("put back %v (lines %q), want %v", plantedErr != nil, lines, tc.putBack)
			}
		})
	}
}

func rename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}
