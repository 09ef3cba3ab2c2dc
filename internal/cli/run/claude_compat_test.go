package run_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/model/modeltest"
	"github.com/broodhq/brood/internal/testbrood"
)

// claudeCode finds Claude Code (testbrood.ClaudeCode: in CI its absence
// is a failure, never a skip).
func claudeCode(t *testing.T) string { return testbrood.ClaudeCode(t, "") }

// runClaude runs the real claude with args in dir against the fake model.
func runClaude(t *testing.T, claude, dir, baseURL string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, claude, args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"ANTHROPIC_BASE_URL=" + baseURL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"IS_SANDBOX=1", // --dangerously-skip-permissions as root (the test machine's CI user may be root)
	}
	cmd.Stdin = strings.NewReader("")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("claude: %v", err)
	}
	return code, out.String(), errb.String()
}

// TestSameInvocationAsClaudeCode drives the real claude -p (2.1.332) and
// brood with the same flags against the same loopback Anthropic server,
// and compares: the exit status, the JSON result's key set (allowlist as
// in TestResultKeysMatchClaudeCode) and modelUsage's key; and for a
// prompt swallowed by --allowedTools, the exit status and the note.
func TestSameInvocationAsClaudeCode(t *testing.T) {
	claude := claudeCode(t)
	p := clitest.NewProject(t)
	fake := modeltest.NewAnthropic(t)
	fake.SetResponder(func(modeltest.Recorded) modeltest.Reply { return modeltest.Reply{Text: "Hello."} })
	p.Env["ANTHROPIC_BASE_URL"], p.Env["ANTHROPIC_API_KEY"] = fake.URL, "sk-ant-test-not-a-key"
	const id = "claude-sonnet-4-5"
	flags := []string{"-p", "Say hello", "--output-format", "json", "--dangerously-skip-permissions",
		"--allowedTools", "Bash(git log:*)", "Edit", "--disallowedTools", "Agent", "--append-system-prompt", "Be brief."}

	ccCode, ccOut, ccErr := runClaude(t, claude, p.Root, fake.URL, append(flags, "--model", id)...)
	brCode, brOut, brErr := p.Brood(append(flags, "--model", "anthropic/"+id)...)
	if ccCode != 0 || brCode != 0 {
		t.Fatalf("exit: claude %d (%s), brood %d (%s)", ccCode, ccErr, brCode, brErr)
	}
	cc, br := keysOf(t, []byte(ccOut)), keysOf(t, []byte(brOut))
	var diff []string
	for k := range cc {
		if !br[k] && !strings.HasPrefix(k, "origin") {
			diff = append(diff, "missing "+k)
		}
	}
	for k := range br {
		if !cc[k] && !contains(broodOnlyKeys, k) {
			diff = append(diff, "extra "+k)
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Errorf("the result keys differ from the real claude's:\n%s\nclaude: %s\nbrood: %s", strings.Join(diff, "\n"), ccOut, brOut)
	}
	for _, out := range []string{ccOut, brOut} {
		if !strings.Contains(out, `"modelUsage":{"`+id+`":`) {
			t.Errorf("modelUsage is not keyed by the bare id %s: %s", id, out)
		}
	}

	// --disallowedTools Agent: neither offers the subagent tool (by
	// either name) in any request.
	var asked int
	for _, r := range fake.Requests() {
		var body struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		for _, tl := range body.Tools {
			asked++
			if tl.Name == "Task" || tl.Name == "Agent" {
				t.Errorf("%s offered to the model despite --disallowedTools Agent", tl.Name)
			}
		}
	}
	if asked == 0 {
		t.Error("no request offered any tool: the check proves nothing")
	}

	// A prompt after --allowedTools' values is one of them, in both.
	swallow := []string{"-p", "--allowedTools", "Bash(git log:*)", "Edit", "Say hello"}
	ccCode, _, ccErr = runClaude(t, claude, p.Root, fake.URL, swallow...)
	brCode, _, brErr = p.Brood(append(swallow[:1], append([]string{"--model", "anthropic/" + id}, swallow[1:]...)...)...)
	note := `"Say hello" was read as a value of --allowedTools, not as a prompt · put a prompt before --allowedTools or after --`
	if ccCode != 1 || brCode != 1 || !strings.Contains(ccErr, note) || !strings.Contains(brErr, note) {
		t.Errorf("swallowed prompt: claude %d %q, brood %d %q", ccCode, ccErr, brCode, brErr)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
