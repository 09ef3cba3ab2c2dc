package e2e_test

import (
	"strings"
	"testing"
)

// TestCheckpointRendering: a child's checkpoint keeps **Plan:**, **Status:**
// and the task number, is shown once, and a child that merely quotes the
// format (in inline code or a code block) is not taken as a checkpoint.
func TestCheckpointRendering(t *testing.T) {
	const checkpointed = `
agents:
  general-purpose:
    - say: "## What I did\nTwo steps.\n\n## CHECKPOINT REACHED\n**Type:** decision\n**Plan:** 02-api\n**Progress:** 2/5 tasks\n\n### Completed Tasks\n| Task | Name | Commit | Files |\n|------|------|--------|-------|\n| 1 | schema | abc123 | db.sql |\n| 2 | handler | def456 | api.go |\n\n### Current Task\n**Task 3:** pagination\n**Status:** awaiting decision\n**Blocked by:** offset or cursor pagination?\n"
`
	const quoting = "\nagents:\n  general-purpose:\n    - say: \"## What I did\\nDocumented the format: a blocked agent writes `## CHECKPOINT REACHED` then `**Type:** decision`.\\n\\n```\\n## CHECKPOINT REACHED\\n**Type:** decision\\n```\\n\\n## Files changed\\nnone\\n\"\n"
	t.Run("checkpoint", func(t *testing.T) {
		p := newProject(t, nil)
		_, stdout, stderr := p.Brood(t.Context(), nil, "subagent", "general-purpose", "--model", p.Script("s.yaml", checkpointed), "Build the API.")
		if !strings.Contains(stdout, `status="checkpoint"`) {
			t.Fatalf("not a checkpoint\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
		for _, want := range []string{"**Plan:** 02-api", "**Progress:** 2/5 tasks", "**Task 3:** pagination", "**Status:** awaiting decision", "**Blocked by:** offset or cursor pagination?", "| 2 | handler | def456 | api.go |"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("the rendered checkpoint lost %q\n%s", want, stdout)
			}
		}
		if n := strings.Count(stdout, "CHECKPOINT REACHED"); n != 1 {
			t.Errorf("the checkpoint block is shown %d times, want once\n%s", n, stdout)
		}
	})
	t.Run("quoting the format", func(t *testing.T) {
		p := newProject(t, nil)
		_, stdout, stderr := p.Brood(t.Context(), nil, "subagent", "general-purpose", "--model", p.Script("s.yaml", quoting), "Document the checkpoint format.")
		if !strings.Contains(stdout, `status="done"`) {
			t.Fatalf("a child quoting the format was taken as a checkpoint\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
	})
}
