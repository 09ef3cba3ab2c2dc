package taskdir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCheckoutDirTakesOverOnlyItsOwn: a checkout with no record directory
// takes over the one directory whose note names a common git dir of
// exactly its identity that is gone from its path (the same directory,
// moved), and nothing else: not one whose identity differs in its birth
// time alone (a directory made anew at the inode number of a deleted
// one) or its device, not one whose checkout is still where it was, not
// one of two that both match, not one reached through a link, not one an
// older brood noted with no identity. Its own directory is then noted as
// it is now (path and identity).
func TestCheckoutDirTakesOverOnlyItsOwn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, id DirID, gone, there string) // candidate records
		taken bool
	}{
		{"its own, moved", func(t *testing.T, id DirID, gone, there string) {
			plantNote(t, "a", gone, &id)
		}, true},
		{"another birth time (an inode reused)", func(t *testing.T, id DirID, gone, there string) {
			id.Birth++
			plantNote(t, "a", gone, &id)
		}, false},
		{"another device", func(t *testing.T, id DirID, gone, there string) {
			id.Dev++
			plantNote(t, "a", gone, &id)
		}, false},
		{"its checkout still there", func(t *testing.T, id DirID, gone, there string) {
			plantNote(t, "a", there, &id)
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
			tc.plant(t, id, filepath.Join(top, "gone", ".git"), top)
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
