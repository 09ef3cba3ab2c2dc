package run_test

import (
	"os"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/model/modeltest"
)

// TestSettingsEnvConfiguresTheModel: a settings env's ANTHROPIC_MODEL,
// ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY configure the model client, as
// Claude Code reads its own settings env, with none of them set in the
// shell, and none set in brood's own environment.
func TestSettingsEnvConfiguresTheModel(t *testing.T) {
	p := clitest.NewProject(t)
	fake := modeltest.NewAnthropic(t)
	fake.SetResponder(func(modeltest.Recorded) modeltest.Reply { return modeltest.Reply{Text: "Hello from the fake."} })
	for _, k := range []string{"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL", "BROOD_MODEL"} {
		p.Env[k] = ""
	}
	const key = "sk-ant-settings-env-not-a-key"
	code, out, errOut := p.Brood("-p", "--settings", `{"env":{"ANTHROPIC_MODEL":"claude-settings-1","ANTHROPIC_BASE_URL":"`+fake.URL+`","ANTHROPIC_API_KEY":"`+key+`"}}`, "Say hello")
	if code != 0 || !strings.Contains(out, "Hello from the fake.") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	reqs := fake.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the settings env's ANTHROPIC_BASE_URL")
	}
	if m, _ := reqs[0].JSON(t)["model"].(string); m != "claude-settings-1" {
		t.Errorf("model %q, want the settings env's ANTHROPIC_MODEL", m)
	}
	if got := reqs[0].Header.Get("X-Api-Key"); got != key {
		t.Errorf("x-api-key %q, want the settings env's key", got)
	}
	for _, k := range []string{"ANTHROPIC_MODEL", "ANTHROPIC_BASE_URL"} {
		if v := os.Getenv(k); strings.Contains(v, "settings") || (v != "" && v == fake.URL) {
			t.Errorf("brood's own environment has %s=%q", k, v)
		}
	}
}
