package workflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestExamples runs every plan in examples/workflows/ with the script
// beside it, as a user would try it offline, and checks what each shows.
func TestExamples(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "examples", "workflows")
	for _, tc := range []struct {
		name   string
		inputs []string
		check  func(t *testing.T, r *wf.Result)
	}{
		{"review-packages", nil, func(t *testing.T, r *wf.Result) {
			var got []string
			for _, c := range phase(t, r, "review").Calls {
				m, _ := c.Output.(map[string]any)
				got = append(got, fmt.Sprint(m["package"]))
			}
			if want := "internal/call internal/workflow internal/engine"; strings.Join(got, " ") != want {
				t.Errorf("reviews of %q, want one per package named as listed (%s)", got, want)
			}
		}},
		{"fix-pipeline", nil, func(t *testing.T, r *wf.Result) {
			out, _ := phase(t, r, "fix").Output.([]any)
			if len(out) != 2 || out[0] == nil || out[1] == nil {
				t.Errorf("fix: %s; want both files through find → patch → verify", js(out))
			}
		}},
		{"design-vote", []string{"--input", "question=Postgres or Redis for the job queue?"}, func(t *testing.T, r *wf.Result) {
			if m, _ := phase(t, r, "ballot").Output.(map[string]any); m["value"] != "postgres" || m["yes"] != 4.0 {
				t.Errorf("vote: %s; want postgres, 4 of 5", js(m))
			}
		}},
		{"bug-hunt", nil, func(t *testing.T, r *wf.Result) {
			if h := phase(t, r, "hunt"); len(h.Output.([]any)) != 3 || h.Rounds != 4 {
				t.Errorf("hunt: %s in %d rounds; want 3 bugs, 4 rounds (two quiet)", js(h.Output), h.Rounds)
			}
		}},
		{"two-waves", nil, func(t *testing.T, r *wf.Result) {
			if out := js(phase(t, r, "plan").Output); !strings.Contains(out, "limiter") {
				t.Errorf("plan: %s", out)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, "agents: {}\n")
			plan, err := os.ReadFile(filepath.Join(dir, tc.name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			script, err := os.ReadFile(filepath.Join(dir, tc.name+".script.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			file := p.plan(tc.name+".yaml", string(plan))
			spec := p.Script(tc.name+".script.yaml", string(script))
			code, out, errs := p.Brood(context.Background(), []string{"BROOD_MODEL=" + spec}, append([]string{"workflow", "run", "--yes", "--json", file}, tc.inputs...)...)
			var res wf.Result
			if json.Unmarshal([]byte(out), &res) != nil || code != 0 || res.Status != wf.RunDone {
				t.Fatalf("exit %d, status %s (%s)\n%s\n%s", code, res.Status, res.Reason, out, errs)
			}
			tc.check(t, &res)
		})
	}
}

var _ = testbrood.WriteFile
