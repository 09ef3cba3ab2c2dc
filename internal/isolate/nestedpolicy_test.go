package isolate

import (
	"slices"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestDelegatingPolicyNamesOnlyItsOwnTask (review 18 S1): a child that
// delegates, top-level or nested in its parent's directory, writes no
// path beneath .brood/dispatch but its own task directory, has the
// dispatch directory hidden whole (one path, however many siblings), and
// an in-place writer's view covers the dispatch directory with its own
// directory, at its nested path, bound back.
func TestDelegatingPolicyNamesOnlyItsOwnTask(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, tc := range []struct {
		name   string
		env    dispatch.Envelope
		nested bool
	}{
		{"read-only", dispatch.Envelope{ReadOnly: true}, false},
		{"in-place writer", dispatch.Envelope{}, false},
		{"in-place writer nested in its parent's", dispatch.Envelope{}, true},
		{"read-only nested in its parent's", dispatch.Envelope{ReadOnly: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := Resolved(t.TempDir())
			proj := taskdir.Open(root)
			own := proj.MustTask(taskdir.NewID())
			if err := own.Create(); err != nil {
				t.Fatal(err)
			}
			env := tc.env
			env.ProjectRoot, env.Workspace, env.Depth, env.MaxDepth = root, root, 1, 3
			env.AllowedDestinations = []string{"explore"}
			if tc.nested {
				c, err := own.Child(taskdir.NewID())
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Create(); err != nil {
					t.Fatal(err)
				}
				own, env.Depth = c, 2
			}
			disp := proj.DispatchRoot()
			before, _ := ChildPolicy(&env, own.Path(), NewPolicyBase(nil))
			for range 50 {
				if err := proj.MustTask(taskdir.NewID()).Create(); err != nil {
					t.Fatal(err)
				}
			}
			p, _ := ChildPolicy(&env, own.Path(), NewPolicyBase(nil))
			for _, w := range p.Writable {
				if within(disp, w) && w != own.Path() {
					t.Errorf("writable beneath the dispatch directory: %s (own %s)", w, own.Path())
				}
			}
			if !slices.Contains(p.Hidden, disp) || len(p.Hidden) != len(before.Hidden) {
				t.Errorf("hidden: %d paths (%d before 50 more tasks), dispatch directory in it: %v", len(p.Hidden), len(before.Hidden), slices.Contains(p.Hidden, disp))
			}
			if env.ReadOnly {
				return
			}
			v := InPlaceViewFor(&env, own.Path(), false, nil)
			if v.Tasks != disp || v.Own != own.Path() {
				t.Errorf("the view covers %q keeping %q, want %q keeping %q", v.Tasks, v.Own, disp, own.Path())
			}
		})
	}
}
