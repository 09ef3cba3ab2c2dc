package taskdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnsureIgnoreListsEveryRecord: a new .brood's .gitignore names every
// record brood writes (fleet/ too: a fleet submitter's kept patches); one
// an older brood wrote gets what it lacked; one the user wrote is theirs.
func TestEnsureIgnoreListsEveryRecord(t *testing.T) {
	older := ignoreHeader + "\ndispatch/\nrecords/\nsessions/\noutputs/\nworkflows/\nbrood-debug.log\nworker.lock\n"
	users := "# mine\n*\n"
	tests := []struct {
		name, before string
		want         func(string) bool
	}{
		{"new", "", func(s string) bool { return s == stateIgnore() && strings.Contains(s, "\nfleet/\n") }},
		{"older brood's", older, func(s string) bool { return s == older+"fleet/\n" }},
		{"current brood's", stateIgnore(), func(s string) bool { return s == stateIgnore() }},
		{"the user's", users, func(s string) bool { return s == users }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			file := filepath.Join(root, StateDirName, ".gitignore")
			if tt.before != "" {
				os.MkdirAll(filepath.Dir(file), 0o755)
				os.WriteFile(file, []byte(tt.before), 0o644)
			}
			if err := Open(root).EnsureWritable(); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(file)
			if !tt.want(string(got)) {
				t.Errorf(".gitignore:\n%s", got)
			}
		})
	}
}
