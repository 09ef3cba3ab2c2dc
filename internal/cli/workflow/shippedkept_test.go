package workflow_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	wf "github.com/broodhq/brood/internal/workflow"
)

// TestShippedKeptResultIsNotListed (review sealrest P1-1, P2-3, P3-7): a
// repository that ships only .brood/workflows/<id>/result.json (no
// run.json, as a kept fleet result has) gets no run listed, shown nor
// "resumed" when no fleet is configured, and a FIFO there hangs nothing;
// a run whose plan.json was swapped is refused without a "resumed" line.
func TestShippedKeptResultIsNotListed(t *testing.T) {
	p := newProject(t, shippedScript)
	p.Env = append(p.Env, "XDG_STATE_HOME="+filepath.Join(p.Home, "state"))
	const shipped, fifo = "01M97000000000000000000000", "01M97000000000000000000009"
	dir := filepath.Join(p.Root, ".brood", "workflows")
	for _, id := range []string{shipped, fifo} {
		if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, shipped, "result.json"), []byte(`{"run_id":"`+shipped+`","plan":"deploy-to-prod-approved","status":"done"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, fifo, "result.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A guard, not a synchronisation: a hang fails instead of blocking the suite.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code, out, errs := p.Brood(ctx, nil, "workflow", "list")
	if code != 0 || strings.Contains(out, shipped) || strings.Contains(out, fifo) || strings.Contains(out, "deploy-to-prod") {
		t.Errorf("workflow list: exit %d; want no shipped run listed\nstdout: %s\nstderr: %s", code, out, errs)
	}
	for _, args := range [][]string{{"workflow", "show", shipped}, {"workflow", "resume", shipped}, {"workflow", "show", fifo}} {
		code, out, errs := p.Brood(ctx, nil, args...)
		if code == 0 || strings.Contains(errs, " resumed") || strings.Contains(out, "deploy-to-prod") {
			t.Errorf("%v: exit %d; want a refusal, nothing resumed\nstdout: %s\nstderr: %s", args, code, out, errs)
		}
	}
	// The user's own run, cancelled, with its plan.json swapped since.
	mine, code, errs := p.run(p.plan("secretive.yaml", secretPlan))
	if code != 0 || mine.Status != wf.RunDone {
		t.Fatalf("the user's run: exit %d\n%s", code, errs)
	}
	run := filepath.Join(dir, mine.RunID)
	res, err := os.ReadFile(filepath.Join(run, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	cancelled := strings.Replace(string(res), `"status": "done"`, `"status": "cancelled"`, 1)
	if err := os.WriteFile(filepath.Join(run, "result.json"), []byte(cancelled), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "plan.json"), []byte(`{"name":"swapped"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = p.Brood(ctx, nil, "workflow", "resume", mine.RunID)
	if code == 0 || strings.Contains(errs, " resumed (it was") || !strings.Contains(errs, "is not the plan the run was started with") {
		t.Errorf("resume of a swapped plan: exit %d; want a refusal with no resumed line\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

// TestShippedBrokenRunIsCounted (review sealrest P3-8): a run.json that is
// not valid JSON is not brood's: left out of the listing and counted in
// its "left out" line.
func TestShippedBrokenRunIsCounted(t *testing.T) {
	p := newProject(t, shippedScript)
	p.Env = append(p.Env, "XDG_STATE_HOME="+filepath.Join(p.Home, "state"))
	dir := filepath.Join(p.Root, ".brood", "workflows", "01M97000000000000000000001")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := p.Brood(context.Background(), nil, "workflow", "list")
	if code != 0 || strings.Contains(out, "01M97000000000000000000001") || !strings.Contains(errs, "1 workflow run(s) in") {
		t.Errorf("workflow list: exit %d; want the broken run counted as left out\nstdout: %s\nstderr: %s", code, out, errs)
	}
}
