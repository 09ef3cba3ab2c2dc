package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestRootHookWritesAreNotTheWriters: a PreToolUse hook appending to a log
// in the project (a common Claude Code pattern), run by the root for an
// in-place writer's own Write, is said to be the hooks' too (newuser
// P3-5): the log stays on the writer's Files changed (what would tell it
// apart is the writer's transcript, which its own tools can rewrite:
// review41 P1-3), with a note naming this run's own hooks.
func TestRootHookWritesAreNotTheWriters(t *testing.T) {
	for _, tc := range []struct {
		name, tools, files, note string
	}{
		{"write only", `[{Write: {file_path: "notes.txt", content: "edited\n"}}]`,
			"Files changed: .hooklog.jsonl, notes.txt\n", "Note: also changed during its run by this run's own hooks (it may have changed them too): .hooklog.jsonl"},
		{"write and bash", `[{Write: {file_path: "notes.txt", content: "edited\n"}}, {Bash: {command: "true", description: "nothing"}}]`,
			"Files changed: .hooklog.jsonl, notes.txt\n", "Note: also changed during its run by this run's own hooks (it may have changed them too): .hooklog.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := clitest.NewDispatchProject(t, false)
			clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "writer.md"), "---\nname: writer\ndescription: writes\ntools: Write, Bash\n---\nYou write.\n")
			clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"), `{"hooks": {
  "PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "echo '{}' >> \"$CLAUDE_PROJECT_DIR/.hooklog.jsonl\""}]}]
}}`)
			mdl := p.Script("s.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: writer, description: "notes", prompt: "write notes.txt"}
    - say: "Task said: {{result 0}}"
  writer:
    - tools: `+tc.tools+`
    - say: "## What I did\nWrote notes.txt.\n\n## What I found\nok\n\n## Files changed\nnotes.txt\n\n## Problems\nnone"
`)
			code, out, errOut := p.Brood("-p", "--permission-mode", "bypassPermissions", "--model", mdl, "Write the notes.")
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, out, errOut)
			}
			if _, err := os.Stat(filepath.Join(p.Root, ".hooklog.jsonl")); err != nil {
				t.Fatalf("the hook never wrote its log (%v):\n%s", err, errOut)
			}
			if !strings.Contains(out, tc.files) || !strings.Contains(out, tc.note) {
				t.Errorf("the writer's result; want %q and %q:\n%s", tc.files, tc.note, out)
			}
		})
	}
}
