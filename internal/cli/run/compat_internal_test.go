package run

import "testing"

// TestClaudeDefaultModel: with no model configured brood picks the model
// as claude -p does: $ANTHROPIC_MODEL, else Claude Code's default when an
// Anthropic key is set, else none (the run then says how to configure one).
func TestClaudeDefaultModel(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"ANTHROPIC_MODEL": "claude-sonnet-4-5", "ANTHROPIC_API_KEY": "k"}, "anthropic/claude-sonnet-4-5"},
		{map[string]string{"ANTHROPIC_MODEL": "anthropic/claude-haiku-4-5"}, "anthropic/claude-haiku-4-5"},
		{map[string]string{"ANTHROPIC_API_KEY": "k"}, "anthropic/" + claudeModel},
		{map[string]string{"ANTHROPIC_AUTH_TOKEN": "t"}, "anthropic/" + claudeModel},
		{map[string]string{"OPENAI_API_KEY": "k"}, ""},
	}
	for _, tc := range tests {
		if got := claudeDefaultModel(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.env, got, tc.want)
		}
	}
}
