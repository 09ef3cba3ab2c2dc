package session_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestSessionOwnerSeal: a session brood claims is the user's; its owner
// record moved to another session's name, a record edited after it was
// sealed, one sealed with another key, and one written where no key could
// be made (no state directory) are not (taskdir.ErrNotYours).
func TestSessionOwnerSeal(t *testing.T) {
	for _, tc := range []struct {
		name string
		mess func(t *testing.T, dir, path string) string // the transcript to check
		mine bool
	}{
		{"claimed", func(t *testing.T, dir, path string) string { return path }, true},
		{"owner record moved to another session", func(t *testing.T, dir, path string) string {
			other := filepath.Join(dir, "01OTHER.jsonl")
			if err := os.Rename(session.OwnerPath(path), session.OwnerPath(other)); err != nil {
				t.Fatal(err)
			}
			return other
		}, false},
		{"owner record edited", func(t *testing.T, dir, path string) string {
			b, err := os.ReadFile(session.OwnerPath(path))
			if err != nil {
				t.Fatal(err)
			}
			var o session.Owner
			if err := json.Unmarshal(b, &o); err != nil {
				t.Fatal(err)
			}
			o.ForkedFrom = "01SOMEONE" // its seal kept
			b, _ = json.Marshal(o)
			if err := os.WriteFile(session.OwnerPath(path), b, 0o644); err != nil {
				t.Fatal(err)
			}
			return path
		}, false},
		{"another key", func(t *testing.T, dir, path string) string {
			if err := os.Remove(filepath.Join(os.Getenv("XDG_STATE_HOME"), "brood", taskdir.RecordKeyName)); err != nil {
				t.Fatal(err)
			}
			return path
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
			dir := t.TempDir()
			path := filepath.Join(dir, "01MINE.jsonl")
			if err := session.Claim(path, ""); err != nil {
				t.Fatal(err)
			}
			err := session.Mine(tc.mess(t, dir, path))
			if (err == nil) != tc.mine || (err != nil && !errors.Is(err, taskdir.ErrNotYours)) {
				t.Errorf("Mine: %v, want mine %v", err, tc.mine)
			}
		})
	}
	t.Run("no state directory", func(t *testing.T) {
		t.Setenv("XDG_STATE_HOME", "")
		t.Setenv("HOME", "")
		path := filepath.Join(t.TempDir(), "01MINE.jsonl")
		if err := session.Claim(path, ""); err != nil {
			t.Fatalf("a session without a key must still start: %v", err)
		}
		if err := session.Mine(path); !errors.Is(err, taskdir.ErrNotYours) {
			t.Errorf("Mine of an unsealed session: %v", err)
		}
	})
}
