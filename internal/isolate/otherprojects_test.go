package isolate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
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
			p, layer := confinedHidden(t, &env, own.Path(), NewPolicyBase(nil))
			for _, d := range []string{filepath.Join(nested, ".brood"), filepath.Join(home, ".local", "state", "brood")} {
				if !slices.Contains(p.Hidden, d) {
					t.Errorf("Hidden (%d paths) does not hold %s", len(p.Hidden), d)
				}
			}
			if d := filepath.Join(other, ".brood"); !slices.Contains(layer, d) || slices.Contains(p.Hidden, d) {
				t.Errorf("the known-projects layer (%q) does not hold %s, or every child's Hidden does", layer, d)
			}
			for _, h := range append(p.Hidden, layer...) {
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

// TestKnownProjectsFitOneEntry: however long the known projects' list
// (written by hand here: Remember keeps at most taskdir.MaxKnown), what
// it adds to a child's hidden list fits the one environment entry that
// carries the list to a child started in a user namespace (the kernel
// refuses one past 128 KiB: no child would start).
func TestKnownProjectsFitOneEntry(t *testing.T) {
	home := Resolved(t.TempDir())
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	// Long paths (existing: a gone one is not hidden), more than fit.
	long := filepath.Join(home, strings.Repeat("a", 250), strings.Repeat("b", 250), strings.Repeat("c", 250), strings.Repeat("d", 250))
	var list []byte
	for i := range 200 {
		d := filepath.Join(long, fmt.Sprintf("p%04d", i), ".brood")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		list = fmt.Appendf(list, "%s\n", d)
	}
	if err := os.MkdirAll(filepath.Dir(taskdir.KnownFile()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(taskdir.KnownFile(), list, 0o600); err != nil {
		t.Fatal(err)
	}
	root := Resolved(t.TempDir())
	own := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := own.Create(); err != nil {
		t.Fatal(err)
	}
	env := &dispatch.Envelope{ReadOnly: true, ProjectRoot: root, Workspace: root, Depth: 1, MaxDepth: 1}
	p, layer := confinedHidden(t, env, own.Path(), NewPolicyBase(nil))
	if n := len(sandbox.HiddenEnv(p)); n >= 128<<10 {
		t.Errorf("the hidden list's environment entry is %d bytes: past the kernel's 128 KiB", n)
	}
	if !slices.Contains(layer, filepath.Join(long, "p0000", ".brood")) {
		t.Errorf("the most recent known project is not hidden")
	}
}

// TestHomeProjectCoversKnownList: an in-place writer of a project at the
// home writes the home, the known projects' list with it, unless its
// mount namespace covers the user's brood state directory.
func TestHomeProjectCoversKnownList(t *testing.T) {
	home := Resolved(t.TempDir())
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	if err := taskdir.Open(home).EnsureWritable(); err != nil {
		t.Fatal(err)
	}
	own := taskdir.Open(home).MustTask(taskdir.NewID())
	if err := own.Create(); err != nil {
		t.Fatal(err)
	}
	env := &dispatch.Envelope{ProjectRoot: home, Workspace: home, Depth: 1, MaxDepth: 1}
	v := InPlaceViewFor(env, own.Path(), false, nil)
	if want := filepath.Join(home, ".local", "state", "brood"); !slices.Contains(v.Covered, want) {
		t.Errorf("the view covers %q, not %s", v.Covered, want)
	}
}

// TestFatKnownProjectHiddenWhole (review 19 H1): a known project whose
// top directory its writers filled (5,000 entries) is hidden whole, one
// rule in its parent's split, not split around its .brood (a rule per
// entry at every spawn of every other project); a thin one keeps its
// files readable and only its .brood hidden.
func TestFatKnownProjectHiddenWhole(t *testing.T) {
	home := Resolved(t.TempDir())
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	fat, thin := filepath.Join(home, "src", "fat"), filepath.Join(home, "src", "thin")
	for _, d := range []string{fat, thin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := taskdir.Open(d).EnsureWritable(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5000 {
		f, err := os.Create(filepath.Join(fat, fmt.Sprintf("bloat-%05d", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	root := Resolved(t.TempDir())
	own := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := own.Create(); err != nil {
		t.Fatal(err)
	}
	env := &dispatch.Envelope{ReadOnly: true, ProjectRoot: root, Workspace: root, Depth: 1, MaxDepth: 1}
	_, layer := confinedHidden(t, env, own.Path(), NewPolicyBase(nil))
	for _, tc := range []struct {
		path string
		want bool
	}{{fat, true}, {filepath.Join(fat, ".brood"), false}, {filepath.Join(thin, ".brood"), true}, {thin, false}} {
		if got := slices.Contains(layer, tc.path); got != tc.want {
			t.Errorf("Hidden holds %s: %v, want %v", tc.path, got, tc.want)
		}
	}
}

// confinedHidden is the policy ConfineChild gives env's child (with the
// known-projects layer's nested paths in Hidden) and what its
// known-projects layer hides.
func confinedHidden(t *testing.T, env *dispatch.Envelope, dir string, base *PolicyBase) (sandbox.Policy, []string) {
	t.Helper()
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock: no known-projects layer")
	}
	p, _ := ChildPolicy(env, dir, base)
	l, err := base.knownLayer(env, dir, &p, false)
	if err != nil {
		t.Fatal(err)
	}
	return p, l.Paths()
}
