package trust_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// TestTrustVerbs: nothing to trust without widening files; grant, --list
// (also as JSON), --revoke; --list with --revoke is refused.
func TestTrustVerbs(t *testing.T) {
	p := clitest.NewProject(t)
	delete(p.Env, "BROOD_TRUST_PROJECT")
	if code, out, _ := p.Brood("trust"); code != 0 || !strings.Contains(out, "nothing to trust") {
		t.Errorf("trust with no settings: code %d %q", code, out)
	}
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "[pool]\nconcurrency = 32\n")
	if code, out, errOut := p.Brood("trust"); code != 0 || !strings.Contains(out, "pool.concurrency 32") || errOut != "" {
		t.Errorf("trust: code %d %q %q", code, out, errOut)
	}
	code, out, _ := p.Brood("trust", "--list", "--json")
	var recs []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &recs) != nil || len(recs) != 1 || recs[0]["root"] != p.Root {
		t.Errorf("trust --list --json: code %d %s", code, out)
	}
	if code, _, errOut := p.Brood("trust", "--list", "--revoke"); code == 0 || !strings.Contains(errOut, "pick one") {
		t.Errorf("--list --revoke: code %d %q", code, errOut)
	}
	if code, out, _ := p.Brood("trust", "--revoke"); code != 0 || !strings.Contains(out, "revoked") {
		t.Errorf("--revoke: code %d %q", code, out)
	}
	if code, out, _ := p.Brood("trust", "--list"); code != 0 || !strings.Contains(out, "no trusted projects") {
		t.Errorf("--list after revoke: code %d %q", code, out)
	}
}
