package e2e_test

import (
	"strings"
	"testing"
)

// TestFixAttemptLimitCountsIntent: five failing variants of one test command
// (other flags each time) are one intent, so the child is stopped at the
// fix-attempt limit with a checkpoint instead of ending done.
func TestFixAttemptLimitCountsIntent(t *testing.T) {
	const script = `
agents:
  general-purpose:
    - tools: [{Bash: {command: "go test ./nothing-here"}}]
    - tools: [{Bash: {command: "go test -v ./nothing-here"}}]
    - tools: [{Bash: {command: "go test -count=1 ./nothing-here"}}]
    - tools: [{Bash: {command: "go test -run TestX ./nothing-here"}}]
    - tools: [{Bash: {command: "cd . && go test -race ./nothing-here"}}]
    - say: "## What I did\nRan the tests.\n\n## What I found\nAll good.\n\n## Files changed\nnone\n\n## Problems\nnone"
`
	p := newProject(t, nil)
	model := p.Script("s.yaml", script)
	_, stdout, stderr := p.Brood(t.Context(), nil, "subagent", "general-purpose", "--allow", "Bash", "--model", model, "--description", "fix the tests", "Make the tests pass.")
	if !strings.Contains(stdout, `status="checkpoint"`) {
		t.Fatalf("five failing go test variants did not stop the child at the fix-attempt limit\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if !strings.Contains(stdout, "go test") {
		t.Fatalf("the checkpoint does not name what kept failing\n%s", stdout)
	}
}
