package spawn

import (
	"slices"
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

// TestChildEnvDropsInheritedMount (review27 P3-1): a mount spec brood
// was itself started with never reaches its children: a child that gets
// none of its own would mount what it names, and the parent, reading the
// first of two, would judge the child by another than the one it gets.
func TestChildEnvDropsInheritedMount(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", `BROOD_ISOLATE={"mode":"overlay","root":"/x"}`, `BROOD_ISOLATE_ENTERED={"mode":"overlay"}`, "HOME=/h"})
	if want := []string{"PATH=/bin", "HOME=/h"}; !slices.Equal(got, want) {
		t.Errorf("childEnv = %q, want %q", got, want)
	}
}
