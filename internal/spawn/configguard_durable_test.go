package spawn

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/trust"
)

// TestCrashedGuardRecordSealed: a guard record whose root is gone is put
// back by RestoreCrashedGuards only when brood sealed it for this user; one
// a repository ships (.brood/records can be committed) that would write
// a hook is never acted on, and one whose root still runs is left to it.
func TestCrashedGuardRecordSealed(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", "")
	for _, tc := range []struct {
		name    string
		owner   procID
		forge   bool
		putBack bool
	}{
		{"sealed, root dead", procID{PID: 1 << 30, Start: "1"}, false, true},
		{"sealed, root alive", procOf(os.Getpid()), false, false},
		{"forged seal", procID{PID: 1 << 30, Start: "1"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			hook := filepath.Join(root, ".git", "hooks", "pre-commit")
			if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
				t.Fatal(err)
			}
			state, err := trust.SnapshotPaths(root, []string{".git/hooks", ".git/commondir"})
			if err != nil {
				t.Fatal(err)
			}
			sr, _ := state.Record()
			if tc.forge {
				// What a repository would ship: a hook it wants written.
				sr.Entries[".git/hooks/pre-commit"] = trust.EntryRecord{Mode: 0o755, Data: []byte("#!/bin/sh\necho pwned\n"), Kept: true}
			}
			planted := filepath.Join(root, ".git", "commondir")
			if err := os.WriteFile(planted, []byte("../evil\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(taskdir.Open(root).Records().Path(), guardsDir)
			rec := guardRecord{Version: guardRecordVersion, TaskID: taskdir.NewID(), Project: root, Owner: tc.owner, States: []trust.StateRecord{sr}}
			if err := writeGuardRecord(dir, &rec); err != nil {
				t.Fatal(err)
			}
			if tc.forge {
				rec.Seal = strings.Repeat("0", 64)
				writeRaw(t, dir, &rec)
			}
			lines := RestoreCrashedGuards(root)
			_, plantedErr := os.Lstat(planted)
			_, hookErr := os.Lstat(hook)
			if hookErr == nil {
				t.Errorf("a hook was written from the record")
			}
			if tc.putBack != (plantedErr != nil) || tc.putBack != (len(lines) == 1) {
				t.Errorf("put back %v (commondir gone: %v, lines %q), want %v", len(lines) == 1, plantedErr != nil, lines, tc.putBack)
			}
			if tc.putBack && !strings.Contains(lines[0], ".git/commondir") {
				t.Errorf("the line does not name .git/commondir: %q", lines[0])
			}
		})
	}
}

// writeRaw writes rec as it is (its seal untouched) over its record.
func writeRaw(t *testing.T, dir string, rec *guardRecord) {
	t.Helper()
	data, err := jsonMarshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, guardRecordName(*rec)), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// TestCrashRestoreLockedRecord: two brood commands that find the same
// crashed guard at once do not both put it back (review P3-6): the one
// that finds the record locked by the other says so in one line and
// leaves it; once the other let go, the record is put back once.
func TestCrashRestoreLockedRecord(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", "")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	state, err := trust.SnapshotPaths(root, []string{".git/commondir"})
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
	// The other brood command, in the middle of its put-back.
	other, err := os.Open(filepath.Join(dir, guardRecordName(rec)))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	lines := RestoreCrashedGuards(root)
	if len(lines) != 1 || !strings.Contains(lines[0], "being put back by another brood command") {
		t.Errorf("while another holds the record: lines %q, want one saying it is being put back", lines)
	}
	if _, err := os.Lstat(planted); err != nil {
		t.Errorf("put back while another brood held the record")
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	lines = RestoreCrashedGuards(root)
	if _, err := os.Lstat(planted); err == nil || len(lines) != 1 || !strings.Contains(lines[0], "put back now") {
		t.Errorf("once let go: lines %q, commondir still there: %v", lines, err == nil)
	}
	if again := RestoreCrashedGuards(root); len(again) != 0 {
		t.Errorf("a record put back is acted on again: %q", again)
	}
}
