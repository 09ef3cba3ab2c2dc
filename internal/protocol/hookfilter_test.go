package protocol

import "testing"

// TestHookMatchClaudeNames: a matcher written with Claude Code's names
// selects brood's tool and built-in agents (Agent is Task, Explore and
// Plan are explore and plan), and brood's own names still match.
func TestHookMatchClaudeNames(t *testing.T) {
	tests := []struct {
		matcher, value string
		want           bool
	}{
		{"Agent", "Task", true},
		{"Task", "Task", true},
		{"Bash|Agent", "Task", true},
		{"Explore", "explore", true},
		{"Plan", "plan", true},
		{"explore", "explore", true},
		{"Explore|Plan", "general-purpose", false},
		{"Explore", "plan", false},
		{"^Agent$", "Task", true},
		{"Agent", "Bash", false},
	}
	for _, tc := range tests {
		if got := HookMatch(tc.matcher, tc.value, ToolAliases(tc.value)...); got != tc.want {
			t.Errorf("HookMatch(%q, %q) = %v, want %v", tc.matcher, tc.value, got, tc.want)
		}
	}
}
