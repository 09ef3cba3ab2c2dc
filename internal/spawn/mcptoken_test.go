package spawn

import (
	"strings"
	"testing"
)

// TestChildEnvDropsMCPToken: BROOD_MCP_TOKEN never reaches a child.
func TestChildEnvDropsMCPToken(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", envMCPToken + "=0123456789abcdef0123", "HOME=/h"})
	if strings.Contains(strings.Join(got, "\n"), envMCPToken) {
		t.Errorf("childEnv kept %s: %q", envMCPToken, got)
	}
	if len(got) != 2 {
		t.Errorf("childEnv dropped more than the token: %q", got)
	}
}
