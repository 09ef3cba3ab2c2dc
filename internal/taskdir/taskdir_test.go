package taskdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func newTask(t *testing.T) (*Dir, string) {
	t.Helper()
	root := t.TempDir()
	d := Open(root).MustTask(NewID())
	if err := d.Create(); err != nil {
		t.Fatal(err)
	}
	return d, root
}

func TestNoFollow(t *testing.T) {
	cases := []struct {
		name  string
		plant func(t *testing.T, d *Dir, victim string)
		act   func(d *Dir, victim string) error
	}{
		{"read through a link", func(t *testing.T, d *Dir, victim string) {
			must(t, os.Symlink(victim, d.File(Result)))
		}, func(d *Dir, victim string) error { var v any; return d.ReadJSON(Result, &v) }},
		{"read through a linked directory", func(t *testing.T, d *Dir, victim string) {
			must(t, os.Symlink(filepath.Dir(victim), d.File(Owners)))
		}, func(d *Dir, victim string) error {
			_, err := d.ReadFile(filepath.Join(Owners, filepath.Base(victim)), 0)
			return err
		}},
		{"write through a linked directory", func(t *testing.T, d *Dir, victim string) {
			must(t, os.Symlink(filepath.Dir(victim), d.File(Owners)))
		}, func(d *Dir, victim string) error {
			return d.WriteFile(filepath.Join(Owners, filepath.Base(victim)), []byte("x"), false)
		}},
		{"mkdir through a link", func(t *testing.T, d *Dir, victim string) {
			must(t, os.Symlink(filepath.Dir(victim), d.File(Inbox)))
		}, func(d *Dir, victim string) error { return d.MkdirAll(filepath.Join(Inbox, "sub")) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, _ := newTask(t)
			victim := filepath.Join(t.TempDir(), "victim")
			must(t, os.WriteFile(victim, []byte("precious"), 0o644))
			c.plant(t, d, victim)
			err := c.act(d, victim)
			if !errors.Is(err, ErrLink) {
				t.Fatalf("got %v, want ErrLink", err)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious" {
				t.Fatalf("victim changed: %q", b)
			}
		})
	}
}

func TestFreshReplacesLinks(t *testing.T) {
	d, _ := newTask(t)
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	must(t, os.WriteFile(victim, []byte("precious"), 0o644))
	must(t, os.Symlink(victim, d.File(Stderr)))
	must(t, os.Symlink(outside, d.File(Tmp)))

	f, err := d.CreateFresh(Stderr)
	must(t, err)
	f.WriteString("child's stderr")
	f.Close()
	tmp, err := d.FreshDir(Tmp, 0o700)
	must(t, err)

	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("victim changed: %q", b)
	}
	for _, p := range []string{d.File(Stderr), tmp} {
		st, err := os.Lstat(p)
		must(t, err)
		if st.Mode()&fs.ModeSymlink != 0 {
			t.Fatalf("%s is still a link", p)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("the link's target was removed: %v", err)
	}
}

func TestAtomicWriteAndParseError(t *testing.T) {
	d, _ := newTask(t)
	must(t, d.WriteJSON(Result, map[string]string{"status": "done"}, true))
	var v map[string]string
	must(t, d.ReadJSON(Result, &v))
	if v["status"] != "done" {
		t.Fatalf("got %v", v)
	}
	must(t, os.WriteFile(d.File(Result), []byte("{not json"), 0o644))
	err := d.ReadJSON(Result, &v)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Path != d.File(Result) {
		t.Fatalf("got %v, want a ParseError naming %s", err, d.File(Result))
	}
	var none any
	if err := d.ReadJSON(Output, &none); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: got %v", err)
	}
}

func TestFIFONeverBlocks(t *testing.T) {
	d, _ := newTask(t)
	must(t, syscall.Mkfifo(d.File(Result), 0o644))
	var v any
	if err := d.ReadJSON(Result, &v); err == nil {
		t.Fatal("read a FIFO as a record")
	}
}

func TestRecords(t *testing.T) {
	p := Open(t.TempDir())
	id := NewID()
	r := p.Records()
	must(t, r.WriteVerdict(id, map[string]bool{"accepted": false}))
	var v map[string]bool
	must(t, r.ReadVerdict(id, &v))
	if v["accepted"] {
		t.Fatal("round trip")
	}
	if err := r.ReadOwner("../../etc/passwd", &v); err == nil {
		t.Fatal("a path passed for an id")
	}
	r.RemoveAll(id)
	if err := r.ReadVerdict(id, &v); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after RemoveAll: %v", err)
	}
}

func TestTaskIDsSkipLinksAndJunk(t *testing.T) {
	d, root := newTask(t)
	p := Open(root)
	must(t, os.Symlink(t.TempDir(), filepath.Join(p.DispatchRoot(), NewID())))
	must(t, os.Mkdir(filepath.Join(p.DispatchRoot(), "not-an-id"), 0o755))
	ids, err := p.TaskIDs()
	must(t, err)
	if len(ids) != 1 || ids[0] != d.ID() {
		t.Fatalf("got %v, want [%s]", ids, d.ID())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestLazy: a lazily made file is not there until its first write; then it
// is a fresh regular file (a link left at its name is removed, never
// followed).
func TestLazy(t *testing.T) {
	d, _ := newTask(t)
	l := d.Lazy(Stderr)
	must(t, l.Close())
	if d.Has(Stderr) {
		t.Fatal("stderr.log made without a write")
	}
	victim := filepath.Join(t.TempDir(), "victim")
	must(t, os.WriteFile(victim, []byte("precious"), 0o644))
	must(t, os.Symlink(victim, d.File(Stderr)))
	l = d.Lazy(Stderr)
	if n, err := l.Write([]byte("boom\n")); n != 5 || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	must(t, l.Close())
	if st, err := os.Lstat(d.File(Stderr)); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("stderr.log: %v, %v (want a regular file)", st, err)
	}
	if b, _ := os.ReadFile(d.File(Stderr)); string(b) != "boom\n" {
		t.Errorf("stderr.log holds %q", b)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("the write went through the link: victim is %q", b)
	}
}

// TestLockIsTheDirectory: the lock is taken on the task directory itself:
// no file is made for it, and a link in the directory's place is refused.
func TestLockIsTheDirectory(t *testing.T) {
	d, root := newTask(t)
	f, err := d.OpenLock()
	must(t, err)
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.IsDir() {
		t.Fatalf("lock: %v, %v (want the directory)", st, err)
	}
	if d.Has(Lock) {
		t.Error("a .lock file was made")
	}
	if _, err := d.OpenLegacyLock(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no legacy lock: got %v", err)
	}
	other := Open(root).MustTask(NewID())
	must(t, os.Symlink(d.Path(), other.Path()))
	if _, err := other.OpenLock(); !errors.Is(err, ErrLink) {
		t.Errorf("lock through a linked task directory: got %v, want ErrLink", err)
	}
}

// TestCreateFast: a task directory is made beneath an existing dispatch
// directory, and the first one makes .brood/ and its .gitignore; a link
// where the task directory should be is refused.
func TestCreateFast(t *testing.T) {
	root := t.TempDir()
	p := Open(root)
	d := p.MustTask(NewID())
	must(t, d.Create())
	if _, err := os.Stat(filepath.Join(p.StateDir(), ".gitignore")); err != nil {
		t.Fatalf("first task: %v", err)
	}
	must(t, d.Create()) // there already: no error
	e := p.MustTask(NewID())
	must(t, os.Symlink(t.TempDir(), e.Path()))
	if err := e.Create(); !errors.Is(err, ErrLink) {
		t.Errorf("create over a link: got %v, want ErrLink", err)
	}
	must(t, p.Records().WriteOwner(d.ID(), map[string]string{"task_id": d.ID()}))
	var v map[string]string
	must(t, p.Records().ReadOwner(d.ID(), &v))
}

// TestRemoveEntry: an entry goes whatever it is (a file, an empty
// directory, a directory with entries, a link to a directory elsewhere),
// links are removed and never followed, and a missing entry is no error.
func TestRemoveEntry(t *testing.T) {
	cases := []struct {
		name  string
		plant func(t *testing.T, at, outside string)
	}{
		{"missing", func(t *testing.T, at, outside string) {}},
		{"file", func(t *testing.T, at, outside string) { must(t, os.WriteFile(at, []byte("x"), 0o644)) }},
		{"empty directory", func(t *testing.T, at, outside string) { must(t, os.Mkdir(at, 0o700)) }},
		{"directory with entries", func(t *testing.T, at, outside string) {
			must(t, os.MkdirAll(filepath.Join(at, "a", "b"), 0o700))
			must(t, os.WriteFile(filepath.Join(at, "a", "b", "f"), []byte("x"), 0o644))
			must(t, os.Symlink(outside, filepath.Join(at, "a", "out")))
		}},
		{"link to a directory", func(t *testing.T, at, outside string) { must(t, os.Symlink(outside, at)) }},
		// (review of gocache3 P3-3: as a user other than root, a mode-0
		// directory with entries could not be opened to be emptied.)
		{"mode-0 directory with entries", func(t *testing.T, at, outside string) {
			must(t, os.MkdirAll(filepath.Join(at, "z", "y"), 0o700))
			must(t, os.WriteFile(filepath.Join(at, "z", "y", "f"), []byte("x"), 0o644))
			must(t, os.Chmod(filepath.Join(at, "z", "y"), 0))
			must(t, os.Chmod(filepath.Join(at, "z"), 0))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, _ := newTask(t)
			outside := t.TempDir()
			must(t, os.WriteFile(filepath.Join(outside, "precious"), []byte("p"), 0o644))
			c.plant(t, d.File(Tmp), outside)
			if err := d.RemoveEntry(Tmp); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(d.File(Tmp)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%s still there: %v", d.File(Tmp), err)
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "precious")); string(b) != "p" {
				t.Fatal("a file a link pointed at was removed")
			}
		})
	}
}
