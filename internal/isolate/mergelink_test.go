package isolate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeFollowsNoLink: the file-by-file merge (git apply refused the
// patch: the tree moved since the spawn) neither reads the tree's file
// through a link made there meanwhile nor writes through a link planted
// at its scratch name: a file outside the tree is never read into it nor
// written.
func TestMergeFollowsNoLink(t *testing.T) {
	iso := testIsolator(t)
	for _, m := range modes(t, iso) {
		for _, c := range []string{"the file became a link", "a link at the merge's name"} {
			t.Run(m.name+"/"+c, func(t *testing.T) {
				dir := newRepo(t)
				outside := filepath.Join(t.TempDir(), "victim")
				ws := prepare(t, iso, dir, "M", m.force)
				if _, err := ws.snap.wait(); err != nil {
					t.Fatal(err)
				}
				edited := strings.Replace(read(t, filepath.Join(dir, "a.txt")), "a2\n", "a2 parent\n", 1)
				a := filepath.Join(dir, "a.txt")
				if c == "the file became a link" {
					write(t, outside, edited)
					if err := os.Remove(a); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(outside, a); err != nil {
						t.Fatal(err)
					}
				} else {
					write(t, outside, "victim\n")
					write(t, a, edited)
					if err := os.Symlink(outside, a+".brood-merge"); err != nil {
						t.Fatal(err)
					}
				}
				runIsolated(t, ws, `sed -i 's/^a7.*$/a7 child/' a.txt`)
				out, err := ws.Finish(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				fi, err := os.Lstat(a)
				if err != nil {
					t.Fatal(err)
				}
				if c == "the file became a link" {
					if fi.Mode()&os.ModeSymlink == 0 || out.Merged {
						t.Errorf("the merge read a.txt through its link into the tree (outcome %+v)", out)
					}
					return
				}
				if got := read(t, outside); got != "victim\n" {
					t.Errorf("the merge wrote through the planted link: the file outside the tree holds %q", got)
				}
				if !fi.Mode().IsRegular() || !strings.Contains(read(t, a), "a2 parent") || !strings.Contains(read(t, a), "a7 child") {
					t.Errorf("a.txt is not the merge (mode %v): %q; outcome %+v", fi.Mode(), read(t, a), out)
				}
			})
		}
	}
}
