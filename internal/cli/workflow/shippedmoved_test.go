package workflow_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	wf "github.com/broodhq/brood/internal/workflow"
)

// TestSealedRunCopiedToAnotherProject (review sealrest P2-2): run.json's
// seal is bound to the project's real path: the user's own sealed run
// copied into another project (same user, same key) is not listed,
// shown nor resumed there.
func TestSealedRunCopiedToAnotherProject(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	a := newProject(t, shippedScript)
	a.Env = append(a.Env, "XDG_STATE_HOME="+state)
	res, code, errs := a.run(a.plan("secretive.yaml", secretPlan))
	if code != 0 || res.Status != wf.RunDone {
		t.Fatalf("the run: exit %d\n%s", code, errs)
	}
	b := newProject(t, shippedScript)
	b.Env = append(b.Env, "XDG_STATE_HOME="+state)
	dst := filepath.Join(b.Root, ".brood", "workflows")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(a.Root, ".brood", "workflows", res.RunID), dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	ctx := context.Background()
	if code, out, errs := b.Brood(ctx, nil, "workflow", "list"); code != 0 || strings.Contains(out, res.RunID) {
		t.Errorf("workflow list in the other project: exit %d; want the copied run left out\n%s\n%s", code, out, errs)
	}
	for _, args := range [][]string{{"workflow", "show", res.RunID}, {"workflow", "resume", res.RunID}} {
		if code, out, errs := b.Brood(ctx, nil, args...); code == 0 || !strings.Contains(errs, "was not made by you") {
			t.Errorf("%v in the other project: exit %d; want a refusal\n%s\n%s", args, code, out, errs)
		}
	}
	if code, out, errs := a.Brood(ctx, nil, "workflow", "show", res.RunID); code != 0 {
		t.Errorf("workflow show in its own project: exit %d\n%s\n%s", code, out, errs)
	}
}
