package isolate

import (
	"slices"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestRootRecordsHidden (review 18 X2): every class's hidden list holds
// the root's transcripts and records, its workflow runs and spilled
// outputs, a child that delegates too, and an
// in-place writer's view covers them whole, delegating or not.
func TestRootRecordsHidden(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	work := t.TempDir()
	for _, tc := range []struct {
		name string
		env  dispatch.Envelope
	}{
		{"read-only", dispatch.Envelope{ReadOnly: true}},
		{"read-only that delegates", dispatch.Envelope{ReadOnly: true, AllowedDestinations: []string{"explore"}, MaxDepth: 2}},
		{"isolated writer", dispatch.Envelope{Isolation: "worktree", IsolationRoot: work}},
		{"in-place writer", dispatch.Envelope{}},
		{"in-place writer that delegates", dispatch.Envelope{AllowedDestinations: []string{"explore"}, MaxDepth: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := Resolved(t.TempDir())
			proj := taskdir.Open(root)
			own := proj.MustTask(taskdir.NewID())
			if err := own.Create(); err != nil {
				t.Fatal(err)
			}
			env := tc.env
			env.ProjectRoot, env.Workspace, env.Depth = root, root, 1
			p, _ := ChildPolicy(&env, own.Path(), NewPolicyBase(nil))
			records := []string{proj.SessionsDir(), proj.RecordsDir(), proj.OutputsDir(), proj.WorkflowsDir()}
			for _, d := range records {
				if !slices.Contains(p.Hidden, d) {
					t.Errorf("Hidden (%d paths) does not hold %s", len(p.Hidden), d)
				}
			}
			if !InPlaceWriter(&env) {
				return
			}
			v := InPlaceViewFor(&env, own.Path(), false, nil)
			if want := records; !slices.Equal(v.Covered, want) {
				t.Errorf("the view covers %q, want %q", v.Covered, want)
			}
		})
	}
}
