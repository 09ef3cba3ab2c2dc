package workflow_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/taskdir"
	wf "github.com/broodhq/brood/internal/workflow"
)

const shippedScript = `
agents:
  explore:
    - say: "I was asked: {{.Prompt}}"
    - say: "I was asked: {{.Prompt}}"
    - say: "I was asked: {{.Prompt}}"
`

// secretValue is an environment secret (a secret-looking name) that the
// user also gives as a plan's input; the plan's own default for another
// input is one too (MY_PLAN_API_KEY).
const secretValue = "wf-s3cret-value-7d1c9e"

const secretPlan = `
name: secretive
inputs:
  token: {default: none}
  key: {default: "wf-pl4n-secret-0a9b8c"}
phases:
  - id: p
    parallel:
      - {id: q, agent: explore, prompt: "call the API with {{inputs.token}}"}
`

// TestShippedWorkflowRunIsNotYours (red team P1-6, workflows; review41
// P3-1, red team P3-3): a run whose run.json carries no seal made with
// this user's record key (a repository shipped .brood/workflows/<id>, or
// another user's brood made it) is not listed (the listing says how many
// it left out), not shown, and never resumed (by id or prefix): its plan,
// with an approval the user never gave, does not run. The user's own run
// is sealed, listed and resumable; a secret given as its --input is on
// disk in none of its plan.json, run.json and journal.
func TestShippedWorkflowRunIsNotYours(t *testing.T) {
	p := newProject(t, shippedScript)
	state := filepath.Join(p.Home, "state")
	p.Env = append(p.Env, "XDG_STATE_HOME="+state, "MY_SERVICE_TOKEN="+secretValue, "MY_PLAN_API_KEY=wf-pl4n-secret-0a9b8c")
	plan := p.plan("secretive.yaml", secretPlan)
	shipped, code, errs := p.run(plan, "--input", "token="+secretValue)
	if code != 0 || shipped.Status != wf.RunDone {
		t.Fatalf("the repository author's run: exit %d, %s\n%s", code, shipped.Status, errs)
	}
	// The repository's author's key is not this user's.
	if err := os.Remove(filepath.Join(state, "brood", taskdir.RecordKeyName)); err != nil {
		t.Fatal(err)
	}
	mine, code, errs := p.run(plan, "--input", "token="+secretValue)
	if code != 0 || mine.Status != wf.RunDone {
		t.Fatalf("the user's run: exit %d, %s\n%s", code, mine.Status, errs)
	}
	if runs := list(t, p); len(runs) != 1 || runs[0].RunID != mine.RunID {
		t.Errorf("workflow list: %+v; want only the user's run %s", runs, mine.RunID)
	}
	ctx := context.Background()
	if _, _, errs := p.Brood(ctx, nil, "workflow", "list"); !strings.Contains(errs, "1 workflow run(s) in") || !strings.Contains(errs, "carry no seal made with your record key") {
		t.Errorf("workflow list does not say a run was left out:\n%s", errs)
	}
	for _, args := range [][]string{
		{"workflow", "show", shipped.RunID},
		{"workflow", "resume", shipped.RunID},
		{"workflow", "resume", strings.ToLower(shipped.RunID[:20])},
	} {
		code, out, errs := p.Brood(ctx, nil, args...)
		if code == 0 || !strings.Contains(errs, "workflow run "+shipped.RunID+" was not made by you") || strings.Contains(errs, "workflow run "+shipped.RunID+" resumed") || strings.Contains(errs, "phase p") {
			t.Errorf("%v: exit %d; want a refusal naming the shipped run\nstdout: %s\nstderr: %s", args, code, out, errs)
		}
	}
	if code, out, errs := p.Brood(ctx, nil, "workflow", "resume", mine.RunID); code != 0 {
		t.Errorf("resume of the user's own run: exit %d\n%s\n%s", code, out, errs)
	}
	// No secret on disk: the run's records.
	for _, name := range []string{"plan.json", "run.json", wf.JournalFile} {
		b, err := os.ReadFile(filepath.Join(p.Root, ".brood", "workflows", mine.RunID, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), secretValue) || strings.Contains(string(b), "wf-pl4n-secret-0a9b8c") || (name == "run.json" && !strings.Contains(string(b), "[REDACTED")) {
			t.Errorf("%s carries the secret or no marker:\n%s", name, b)
		}
	}
}
