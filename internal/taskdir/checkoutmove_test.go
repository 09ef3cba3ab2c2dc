package taskdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckoutDirTakesOverOnlyItsOwn: a checkout with no record directory
// takes over the one directory whose note names a common git dir of
// exactly its identity that is gone from its path (the same directory,
// moved), and nothing else: not one whose identity differs in its birth
// time alone (a directory made anew at the inode number of a deleted
// one) or its file system, not one whose checkout is still where it was
// (a second path to it, as a bind mount is), not
// one of two that both match, not one reached through a link, not one an
// older brood noted with no identity. Its own directory is then noted as
// it is now (path and identity).
func TestCheckoutDirTakesOverOnlyItsOwn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, id DirID, gone, there string) // candidate records; there reaches the checkout another way
		taken bool
	}{
		{"its own, moved", func(t *testing.T, id DirID, gone, there string) {
			plantNote(t, "a", gone, &id)
		}, true},
		{"another birth time (an inode reused)", func(t *testing.T, id DirID, gone, there string) {
			id.Birth++
			plantNote(t, "a", gone, &id)
		}, false},
		{"another file system", func(t *testing.T, id DirID, gone, there string) {
			id.FS++
			plantNote(t, "a", gone, &id)
		}, false},
		{"its checkout still there", func(t *testing.T, id DirID, gone, there string) {
			plantNote(t, "a", filepath.Join(there, ".git"), &id)
		}, false},
		{"two alike", func(t *testing.T, id DirID, gone, there string) {
			plantNote(t, "a", gone, &id)
			plantNote(t, "b", gone+"2", &id)
		}, false},
		{"a link to it", func(t *testing.T, id DirID, gone, there string) {
			dir := plantNote(t, "a", gone, &id)
			out := filepath.Join(t.TempDir(), "out")
			must(t, os.Rename(dir, out))
			must(t, os.Symlink(out, dir))
		}, false},
		{"an older brood's note", func(t *testing.T, id DirID, gone, there string) {
			plantNote(t, "a", gone, nil)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ownStateHome(t)
			top, err := filepath.EvalSymlinks(t.TempDir())
			must(t, err)
			common := filepath.Join(top, "moved", ".git")
			must(t, os.MkdirAll(common, 0o755))
			id, ok := DirIdentity(common)
			if !ok {
				t.Skip("this file system keeps no birth time")
			}
			alias := filepath.Join(top, "alias")
			must(t, os.Symlink(filepath.Join(top, "moved"), alias))
			tc.plant(t, id, filepath.Join(top, "gone", ".git"), alias)
			dir := CheckoutDir(common)
			var got string
			taken := ReadStateJSON(filepath.Join(dir, "fleet", "record.json"), 1<<10, &got) == nil && got == "kept"
			if taken != tc.taken {
				t.Fatalf("records taken over: %v, want %v", taken, tc.taken)
			}
			var n checkoutNote
			if err := ReadStateJSON(filepath.Join(dir, checkoutNoteFile), maxNote, &n); err != nil || n.Common != common || n.ID == nil || *n.ID != id {
				t.Errorf("note %+v, %v; want %s and its identity %+v", n, err, common, id)
			}
			if st, err := os.Lstat(dir); err != nil || st.Mode() != os.ModeDir|0o700 {
				t.Errorf("the checkout's directory: %v, %v", st, err)
			}
		})
	}
}

// plantNote makes a checkout's record directory named by name's hash,
// holding a record and a note naming common with identity id; it returns
// the directory.
func plantNote(t *testing.T, name, common string, id *DirID) string {
	t.Helper()
	dir := CheckoutState("/planted/" + name)
	must(t, WriteStateJSON(filepath.Join(dir, "fleet", "record.json"), "kept"))
	must(t, WriteStateJSON(filepath.Join(dir, checkoutNoteFile), &checkoutNote{Common: common, ID: id}))
	return dir
}

// TestCheckoutDirSetsAsideAnotherCheckoutsRecords: records under this
// checkout's path whose note names another identity are another
// checkout's that was here (moved away, this one made anew: review38
// P3-1): they are set aside, never this one's, and that checkout, found
// by its identity, takes them back wherever it is now.
func TestCheckoutDirSetsAsideAnotherCheckoutsRecords(t *testing.T) {
	ownStateHome(t)
	top, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	common := filepath.Join(top, "a", ".git")
	must(t, os.MkdirAll(common, 0o755))
	if _, ok := DirIdentity(common); !ok {
		t.Skip("this file system keeps no birth time")
	}
	must(t, WriteStateJSON(filepath.Join(CheckoutDir(common), "fleet", "record.json"), "kept"))
	must(t, os.Rename(filepath.Join(top, "a"), filepath.Join(top, "b")))
	must(t, os.MkdirAll(common, 0o755)) // made anew where the first was
	var got string
	if err := ReadStateJSON(filepath.Join(CheckoutDir(common), "fleet", "record.json"), 1<<10, &got); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the new checkout at the path reads %q, %v; want no record", got, err)
	}
	moved := filepath.Join(top, "b", ".git")
	if err := ReadStateJSON(filepath.Join(CheckoutDir(moved), "fleet", "record.json"), 1<<10, &got); err != nil || got != "kept" {
		t.Fatalf("the first checkout, moved, reads %q, %v; want its record", got, err)
	}
}
