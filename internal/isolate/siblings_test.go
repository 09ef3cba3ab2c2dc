package isolate

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestOtherTasksHiddenWhole: a child that does not delegate, of every
// class, is kept from the other tasks' directories by one entry, the
// dispatch directory, whatever their number (it was one entry per other
// task: thousands of paths to list, match and pass on at every spawn in a
// long-lived project, past what one environment entry may hold for an
// overlay child); its own directory is writable, so still read.
func TestOtherTasksHiddenWhole(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	work := t.TempDir()
	for _, tc := range []struct {
		name string
		env  dispatch.Envelope
	}{
		{"read-only", dispatch.Envelope{ReadOnly: true}},
		{"isolated writer", dispatch.Envelope{Isolation: "worktree", IsolationRoot: work}},
		{"in-place writer", dispatch.Envelope{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := Resolved(t.TempDir())
			proj := taskdir.Open(root)
			own := proj.MustTask(taskdir.NewID())
			if err := own.Create(); err != nil {
				t.Fatal(err)
			}
			env := tc.env
			env.ProjectRoot, env.Workspace = root, root
			base := NewPolicyBase(nil)
			policy := func() sandbox.Policy {
				p, _ := ChildPolicy(&env, own.Path(), base)
				return p
			}
			alone := policy()
			for range 200 {
				td := proj.MustTask(taskdir.NewID())
				if err := td.Create(); err != nil {
					t.Fatal(err)
				}
			}
			p := policy()
			dispatchRoot := proj.DispatchRoot()
			if !slices.Contains(p.Hidden, dispatchRoot) {
				t.Errorf("Hidden (%d paths) does not hold %s", len(p.Hidden), dispatchRoot)
			}
			if len(p.Hidden) != len(alone.Hidden) {
				t.Errorf("Hidden grew from %d to %d paths with 200 other tasks", len(alone.Hidden), len(p.Hidden))
			}
			for _, h := range p.Hidden {
				if filepath.Dir(h) == dispatchRoot {
					t.Errorf("Hidden names a task directory, %s: the dispatch directory is hidden whole", h)
					break
				}
			}
			if !slices.Contains(p.Writable, own.Path()) {
				t.Errorf("Writable %q does not hold the child's own directory %s", p.Writable, own.Path())
			}
			if env := sandbox.HiddenEnv(p); len(env) > 64<<10 {
				t.Errorf("the hidden list passed to an overlay child is %d bytes", len(env))
			}
		})
	}
}

// TestOtherTasksCovered: the dispatch directory a writer's mount namespace
// covers (otherTasks) is the one that holds its own task directory, top-level
// or nested in its parent's (a delegating child's child), when that is in
// its tree and the child does not keep it.
func TestOtherTasksCovered(t *testing.T) {
	const a, b, c = "01ARZ3NDEKTSV4RRFFQ69G5FAA", "01ARZ3NDEKTSV4RRFFQ69G5FAB", "01ARZ3NDEKTSV4RRFFQ69G5FAC"
	for _, tc := range []struct {
		name, root, own string
		kept            []string
		want            string
	}{
		{"in the tree", "/p", "/p/.brood/dispatch/" + a, nil, "/p/.brood/dispatch"},
		{"nested in its parent's", "/p", "/p/.brood/dispatch/" + a + "/tasks/" + b, nil, "/p/.brood/dispatch"},
		{"nested two deep", "/p", "/p/.brood/dispatch/" + a + "/tasks/" + b + "/tasks/" + c, nil, "/p/.brood/dispatch"},
		{"kept whole", "/p", "/p/.brood/dispatch/" + a, []string{"/p/.brood/dispatch"}, ""},
		{"outside the tree (the records moved out)", "/p", "/home/u/.local/state/brood/projects/p/dispatch/" + a, nil, ""},
		{"not a dispatch directory", "/p", "/p/tmp/" + a, nil, ""},
		{"not a task id", "/p", "/p/.brood/dispatch/T", nil, ""},
		{"tasks/ but not in a task", "/p", "/p/.brood/dispatch/x/tasks/" + b, nil, ""},
		{"no task directory", "/p", "", nil, ""},
	} {
		if got := otherTasks(tc.root, tc.own, tc.kept); got != tc.want {
			t.Errorf("%s: otherTasks = %q, want %q", tc.name, got, tc.want)
		}
	}
}
