package isolate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestOtherProjectsHidden: every class's hidden list holds the known
// projects' state directories whole (one path each) and the user's brood
// state directory, never its own project's; an in-place writer's view
// covers a known project nested in its tree, whose rule would grant it.
func TestOtherProjectsHidden(t *testing.T) {
	home := Resolved(t.TempDir())
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	root := Resolved(t.TempDir())
	other := filepath.Join(home, "src", "other")
	nested := filepath.Join(root, "vendor", "lib")
	for _, d := range []string{other, nested, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := taskdir.Open(d).EnsureWritable(); err != nil {
			t.Fatal(err)
		}
	}
	proj := taskdir.Open(root)
	own := proj.MustTask(taskdir.NewID())
	if err := own.Create(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  dispatch.Envelope
	}{
		{"read-only", dispatch.Envelope{ReadOnly: true}},
		{"read-only that delegates", dispatch.Envelope{ReadOnly: true, AllowedDestinations: []string{"explore"}, MaxDepth: 2}},
		{"in-place writer", dispatch.Envelope{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			env.ProjectRoot, env.Workspace, env.Depth = root, root, 1
			p, _ := ChildPolicy(&env, own.Path(), NewPolicyBase(nil))
			for _, d := range []string{filepath.Join(other, ".brood"), filepath.Join(nested, ".brood"), filepath.Join(home, ".local", "state", "brood")} {
				if !slices.Contains(p.Hidden, d) {
					t.Errorf("Hidden (%d paths) does not hold %s", len(p.Hidden), d)
				}
			}
			for _, h := range p.Hidden {
				if within(h, proj.StateDir()) || h == proj.StateDir() {
					t.Errorf("Hidden holds %s, which holds the child's own project's state", h)
				}
			}
			if !InPlaceWriter(&env) {
				return
			}
			v := InPlaceViewFor(&env, own.Path(), false, nil)
			if !slices.Contains(v.Covered, filepath.Join(nested, ".brood")) {
				t.Errorf("the view covers %q, not the nested project's %s", v.Covered, filepath.Join(nested, ".brood"))
			}
		})
	}
}
