package tui

import (
	"path/filepath"
	"testing"
)

// TestAlwaysRulesMatchTheToolsOwnField: a session's "always" rule answers
// a child's question when it covers what the call acts on, put under the
// tool's own field (tool.SubjectField), the only one the permission check
// reads.
func TestAlwaysRulesMatchTheToolsOwnField(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the answers are noted in the user's ledger
	tests := []struct {
		rule    string
		tool    string
		subject string
		want    bool
	}{
		{"Edit(sub/**)", "Write", filepath.Join(root, "sub", "a"), true},
		{"Edit(sub/**)", "Write", filepath.Join(root, "other", "a"), false},
		{"Edit(sub/**)", "Edit", filepath.Join(root, "sub", "a"), true},
		{"Bash(make:*)", "Bash", "make test", true},
		{"Bash(make:*)", "Bash", "rm -rf x", false},
		{"Task(scout)", "Task", "scout", true},
		{"Task(scout)", "Task", "writer", false},
	}
	for _, tt := range tests {
		r := newAskRules(root, nil)
		if _, _, _, err := r.add([]string{tt.rule}); err != nil {
			t.Fatal(err)
		}
		if got := r.allows(tt.tool, tt.subject); got != tt.want {
			t.Errorf("rule %q: allows(%s, %s) = %v, want %v", tt.rule, tt.tool, tt.subject, got, tt.want)
		}
	}
}
