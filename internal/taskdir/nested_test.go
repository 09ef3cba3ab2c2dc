package taskdir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// nestedProject makes top → child → grandchild, nested, plus a flat task
// an older brood made, and returns them.
func nestedProject(t *testing.T) (p Project, top, child, grand, flat *Dir) {
	t.Helper()
	p = Open(t.TempDir())
	top = p.MustTask(NewID())
	must(t, top.Create())
	child, err := top.Child(NewID())
	must(t, err)
	must(t, child.Create())
	grand, err = child.Child(NewID())
	must(t, err)
	must(t, grand.Create())
	flat = p.MustTask(NewID())
	must(t, flat.Create())
	return p, top, child, grand, flat
}

// TestNestedLayout: a child's task directory is made in its parent's
// tasks/, knows its parent, is found by id (by the root's record of where
// it is, else by a walk) and by its path, and every task is listed.
func TestNestedLayout(t *testing.T) {
	p, top, child, grand, flat := nestedProject(t)
	if want := filepath.Join(p.DispatchRoot(), top.ID(), Tasks, child.ID(), Tasks, grand.ID()); grand.Path() != want {
		t.Fatalf("grandchild at %s, want %s", grand.Path(), want)
	}
	if st, err := os.Lstat(grand.Path()); err != nil || !st.IsDir() {
		t.Fatalf("grandchild's directory: %v", err)
	}
	if grand.Parent().Path() != child.Path() || child.Parent().Path() != top.Path() || top.Parent() != nil || flat.Nested() {
		t.Errorf("parents: %v %v %v %v", grand.Parent(), child.Parent(), top.Parent(), flat.Nested())
	}
	for _, d := range []*Dir{top, child, grand, flat} {
		got, err := p.Find(d.ID())
		if err != nil || got.Path() != d.Path() {
			t.Errorf("Find(%s) = %v, %v; want %s", d.ID(), got, err, d.Path())
		}
		byPath, err := FromPath(d.Path())
		if err != nil || byPath.Path() != d.Path() || byPath.ID() != d.ID() {
			t.Errorf("FromPath(%s) = %v, %v", d.Path(), byPath, err)
		}
	}
	must(t, p.Records().WriteWhere([]string{top.ID(), child.ID(), grand.ID()}))
	if got, err := p.Find(grand.ID()); err != nil || got.Path() != grand.Path() {
		t.Errorf("Find by the root's record = %v, %v", got, err)
	}
	ids, err := p.TaskIDs()
	must(t, err)
	want := []string{top.ID(), child.ID(), grand.ID(), flat.ID()}
	slices.Sort(want)
	slices.Reverse(want)
	if !slices.Equal(ids, want) {
		t.Errorf("TaskIDs = %v, want %v (newest first)", ids, want)
	}
	if _, err := p.Find(NewID()); err == nil {
		t.Error("Find of an unknown id found something")
	}
}

// TestNestedForgery: a child that makes, beneath its own directory, a
// directory named by another child's child's id does not get lookups of
// that id: the root's record of where the real one is decides, and
// without it the lookup refuses to guess. A link a child plants at tasks/
// is not walked.
func TestNestedForgery(t *testing.T) {
	p, top, child, grand, _ := nestedProject(t)
	other := p.MustTask(NewID())
	must(t, other.Create())
	forged, err := other.Child(grand.ID())
	must(t, err)
	must(t, forged.Create())
	if _, err := p.Find(grand.ID()); err == nil || !strings.Contains(err.Error(), "2 places") {
		t.Errorf("Find of a forged id without the root's record: %v", err)
	}
	must(t, p.Records().WriteWhere([]string{top.ID(), child.ID(), grand.ID()}))
	if got, err := p.Find(grand.ID()); err != nil || got.Path() != grand.Path() {
		t.Errorf("Find with the root's record = %v, %v; want %s", got, err, grand.Path())
	}

	linker := p.MustTask(NewID())
	must(t, linker.Create())
	must(t, os.Symlink(filepath.Join(top.Path(), Tasks), linker.File(Tasks)))
	ds, err := p.Tasks()
	must(t, err)
	n := 0
	for _, d := range ds {
		if d.ID() == child.ID() {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the child is listed %d times (a linked tasks/ was walked)", n)
	}
}

func TestSplitTaskPath(t *testing.T) {
	a, b := NewID(), NewID()
	for _, tc := range []struct {
		path, disp, rel string
		ok              bool
	}{
		{"/p/.brood/dispatch/" + a, "/p/.brood/dispatch", a, true},
		{"/p/.brood/dispatch/" + a + "/tasks/" + b, "/p/.brood/dispatch", a + "/tasks/" + b, true},
		{"/p/.brood/dispatch/" + a + "/tmp/" + b, "", "", false},
		{"/p/.brood/dispatch/x/tasks/" + b, "", "", false},
		{"/p/tmp/" + a, "", "", false},
	} {
		disp, rel, ok := SplitTaskPath(tc.path)
		if disp != tc.disp || rel != tc.rel || ok != tc.ok {
			t.Errorf("SplitTaskPath(%s) = %q %q %v", tc.path, disp, rel, ok)
		}
	}
}
