package agents

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/registry"
)

// TestWebSearchText: `brood agents show` says whether an agent naming
// WebSearch gets the provider's search, and why not.
func TestWebSearchText(t *testing.T) {
	off := false
	for _, tt := range []struct {
		d    registry.Definition
		want string
	}{
		{registry.Definition{Tools: []string{"Read"}}, ""},
		{registry.Definition{Tools: []string{"WebSearch"}}, "Anthropic models"},
		{registry.Definition{AllTools: true, Model: "sonnet"}, "Anthropic models"},
		{registry.Definition{Tools: []string{"WebSearch"}, Model: "anthropic/claude-opus-4-5"}, "allow rule WebSearch"},
		{registry.Definition{Tools: []string{"WebSearch"}, Model: "openai/gpt-5"}, "not offered: this model's provider offers no server-side search; the agent runs without it"},
		{registry.Definition{Tools: []string{"WebSearch"}, Network: &off}, "not offered: network: none"},
	} {
		got := webSearchText(&tt.d)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%+v: %q, want %q", tt.d, got, tt.want)
		}
	}
}
