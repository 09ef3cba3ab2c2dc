package run_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestTaskContext: the Task tool takes an optional context (Hermes' goal
// + context) and the child's system prompt carries it as its own CONTEXT
// section, after the task; a resume rebuilds the same prompt.
func TestTaskContext(t *testing.T) {
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	t.Setenv("HOME", p.Home) // the in-process resume reads the run's record key
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "scout.md"), clitest.ScoutAgent)
	script := p.Script("s.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: scout, description: "look", prompt: "Find the entry point.", context: "The team moved main.go last week; the old cmd/ tree is dead."}
        - Task: {subagent_type: scout, description: "plain", prompt: "Find the README."}
    - say: "done"
  scout:
    - tools: [{Read: {file_path: README.md}}]
    - say: "read it"
`)
	d := p.Start(nil, "run", "--model", script, "go")
	if code := d.Wait(t); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, d.Stderr.String())
	}
	var withCtx, without *dispatch.Envelope
	for _, id := range clitest.TaskIDs(t, p.Root) {
		var env dispatch.Envelope
		clitest.ReadRecord(t, p.Root, id, "envelope.json", &env)
		if env.HandoffReason == "look" {
			withCtx = &env
		} else {
			without = &env
		}
	}
	if withCtx == nil || without == nil {
		t.Fatal("want two tasks, one with context")
	}
	const section = "CONTEXT (background from the parent agent, to inform the task above):\nThe team moved main.go last week; the old cmd/ tree is dead.\n"
	task := strings.Index(withCtx.System, "YOUR TASK (look)")
	ctx := strings.Index(withCtx.System, section)
	if task < 0 || ctx < task {
		t.Errorf("the child's system prompt lacks its CONTEXT section after YOUR TASK:\n%s", withCtx.System)
	}
	if withCtx.Context != "The team moved main.go last week; the old cmd/ tree is dead." {
		t.Errorf("envelope context = %q", withCtx.Context)
	}
	if strings.Contains(without.System, "CONTEXT") {
		t.Errorf("a Task without context got a CONTEXT section:\n%s", without.System)
	}
	// A resume rebuilds the system prompt from the parent's records: the
	// section stays.
	code, out, errOut := p.Brood("tasks", "resume", withCtx.TaskID, "and the tests?")
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errOut)
	}
	var again dispatch.Envelope
	clitest.ReadRecord(t, p.Root, withCtx.TaskID, "envelope.json", &again)
	if !strings.Contains(again.System, section) {
		t.Errorf("the resumed child's system prompt lost its CONTEXT section:\n%s", again.System)
	}
}

// TestEnvelopeHandoffFields: every envelope has resume_pointer from the
// dispatch on (the delegation-patterns envelope's field), and a fork's
// allowed_destinations says what it may really do: nothing at the depth
// cap, its parent's scope below it.
func TestEnvelopeHandoffFields(t *testing.T) {
	script := `agents:
  root:
    - tools:
        - Task: {description: "forked", prompt: "Carry on from here.", fork: true}
    - say: "done"
  fork:
    - tools: [{Read: {file_path: README.md}}]
    - say: "## What I did\nRead.\n## What I found\nok\n## Files changed\nnone\n## Problems\nnone"
  "*":
    - tools: [{Read: {file_path: README.md}}]
    - say: "## What I did\nRead.\n## What I found\nok\n## Files changed\nnone\n## Problems\nnone"
`
	for _, tc := range []struct {
		name    string
		flags   []string
		allowed []string
	}{
		{"at the cap", nil, []string{}},
		{"below the cap", []string{"--max-subagent-depth", "2"}, []string{"*"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := clitest.NewProject(t)
			t.Setenv(clitest.TestMainEnv, "1")
			d := p.Start(nil, append(append([]string{"run", "--model", p.Script("s.yaml", script)}, tc.flags...), "go")...)
			if code := d.Wait(t); code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s", code, d.Stderr.String())
			}
			id := clitest.OnlyTask(t, p.Root)
			raw, err := os.ReadFile(filepath.Join(dispatch.Dir(p.Root, id), "envelope.json"))
			if err != nil {
				t.Fatal(err)
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(raw, &fields); err != nil {
				t.Fatal(err)
			}
			var pointer string
			if err := json.Unmarshal(fields["resume_pointer"], &pointer); err != nil || pointer == "" {
				t.Errorf("resume_pointer is %s, want it written at dispatch", fields["resume_pointer"])
			}
			var env dispatch.Envelope
			if err := json.Unmarshal(raw, &env); err != nil {
				t.Fatal(err)
			}
			if !env.Fork || !slices.Equal(env.AllowedDestinations, tc.allowed) {
				t.Errorf("fork %v at depth %d/%d: allowed_destinations %q, want %q", env.Fork, env.Depth, env.MaxDepth, env.AllowedDestinations, tc.allowed)
			}
		})
	}
}
