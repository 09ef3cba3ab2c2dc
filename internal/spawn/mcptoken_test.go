package spawn

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/isolate"
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

// TestChildEnvDropsItsOwnPolicy: the policy a delegating child's parent
// passed it (isolate.EnvChildPolicy, read and removed at its start, but
// also in an environment captured before) never reaches its own children:
// each gets the one built for it, and a stale one names another task
// directory, which a child refuses.
func TestChildEnvDropsItsOwnPolicy(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", isolate.EnvChildPolicy + `={"dir":"/p/.brood/dispatch/T"}`, "HOME=/h"})
	if strings.Contains(strings.Join(got, "\n"), isolate.EnvChildPolicy) || len(got) != 2 {
		t.Errorf("childEnv = %q, want PATH and HOME alone", got)
	}
}
