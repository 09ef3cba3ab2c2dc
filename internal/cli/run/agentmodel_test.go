package run_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/model/modeltest"
)

// TestUntrustedProjectAgentModelIsHeld (known gap): a repository's agent
// file that picks its model (`model: openai/gpt-4o-mini`, with the
// user's OPENAI_BASE_URL: a provider and an endpoint of the user's that
// would get the code and the bill) is held until the project is trusted,
// as the project settings' model is: the child runs on its parent's
// model, and the run says so once, naming the file, its line and `brood
// trust`. Trusted, the file's model is the child's.
func TestUntrustedProjectAgentModelIsHeld(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted bool
	}{
		{"untrusted", false},
		{"trusted", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := clitest.NewProject(t)
			t.Setenv(clitest.TestMainEnv, "1")
			fake := modeltest.NewOpenAI(t)
			fake.SetResponder(func(modeltest.Recorded) modeltest.Reply {
				return modeltest.Reply{Text: "## What I did\nreviewed on openai\n## Files changed\nnone\n"}
			})
			t.Setenv("OPENAI_BASE_URL", fake.URL)
			t.Setenv("OPENAI_API_KEY", "not-a-key-but-set")
			p.Env["BROOD_TRUST_PROJECT"] = ""
			if tc.trusted {
				p.Env["BROOD_TRUST_PROJECT"] = "1"
			}
			clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "agents", "rev.md"),
				"---\nname: rev\ndescription: reviews\nmodel: openai/gpt-4o-mini\ntools: Read\n---\nReview.\n")
			script := p.Script("s.yaml", `
agents:
  root:
    - tools:
        - Task: {subagent_type: rev, description: "review", prompt: "review main.go"}
    - say: "root saw: {{result 0}}"
  rev:
    - say: |
        ## What I did
        reviewed on the parent's model
        ## Files changed
        none
`)
			code, out, errOut := p.Brood("run", "--model", script, "--allow", "Task", "go")
			if code != 0 {
				t.Fatalf("code %d\n%s\n%s", code, out, errOut)
			}
			var env struct {
				Model string `json:"model"`
			}
			clitest.ReadRecord(t, p.Root, clitest.OnlyTask(t, p.Root), "envelope.json", &env)
			const where = ".claude/agents/rev.md:4"
			if !tc.trusted {
				if env.Model != script || len(fake.Requests()) > 0 || !strings.Contains(out, "reviewed on the parent's model") {
					t.Errorf("untrusted: the child ran on %q (%d requests to the file's provider), want the parent's %s:\n%s", env.Model, len(fake.Requests()), script, out)
				}
				if n := strings.Count(errOut, where); n != 1 || !strings.Contains(errOut, "brood trust") {
					t.Errorf("want one warning naming %s and brood trust, have %d:\n%s", where, n, errOut)
				}
				return
			}
			if env.Model != "openai/gpt-4o-mini" || len(fake.Requests()) == 0 || !strings.Contains(out, "reviewed on openai") {
				t.Errorf("trusted: the child ran on %q (%d requests), want the file's model:\n%s\n%s", env.Model, len(fake.Requests()), out, errOut)
			}
			if strings.Contains(errOut, where) {
				t.Errorf("trusted: a warning about the model:\n%s", errOut)
			}
		})
	}
}
