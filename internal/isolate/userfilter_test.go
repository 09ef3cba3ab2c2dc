//go:build linux

package isolate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsersFilterPairLandsRight: the user has a smudge/clean filter pair
// in their own ~/.gitconfig (as git-lfs or git-crypt installs one, here a
// reversible rot13, required) and the repository's committed
// .gitattributes name it: the tree holds smudged files, the repository
// their clean form. An isolated writer that touches a filtered file
// without changing it (so git re-hashes it, as it does every racily clean
// entry of a fresh copy) and edits an unrelated one lands exactly its own
// change; one that edits a filtered file lands the file as it wrote it,
// and the repository sees its clean form.
func TestUsersFilterPairLandsRight(t *testing.T) {
	iso := testIsolator(t)
	global := filepath.Join(t.TempDir(), "gitconfig")
	rot := "tr A-Za-z N-ZA-Mn-za-m"
	write(t, global, "[filter \"rot\"]\n\tclean = "+rot+"\n\tsmudge = "+rot+"\n\trequired = true\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	for _, m := range modes(t, iso) {
		for _, c := range []struct{ name, script, wantFile, wantText string }{
			{"unrelated", "touch s1.rot s2.rot && sed -i 's/^a5$/a5 child/' a.txt", "a.txt", "a5 child"},
			{"filtered", "touch s2.rot && echo 'Hello child' >> s1.rot", "s1.rot", "Hello child"},
		} {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				dir := newRepo(t)
				write(t, filepath.Join(dir, ".gitattributes"), "*.rot filter=rot\n")
				write(t, filepath.Join(dir, "s1.rot"), "Secret one\n")
				write(t, filepath.Join(dir, "s2.rot"), "Secret two\n")
				git(t, dir, "add", ".gitattributes", "s1.rot", "s2.rot")
				git(t, dir, "commit", "-qm", "filtered")
				if blob := git(t, dir, "cat-file", "-p", "HEAD:s1.rot"); blob != "Frperg bar\n" {
					t.Fatalf("the filter pair does not run in the test repository: blob %q", blob)
				}
				ws := prepare(t, iso, dir, "R", m.force)
				runIsolated(t, ws, c.script)
				out, err := ws.Finish(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if !out.Applied || len(out.Files) != 1 || out.Files[0] != c.wantFile {
					t.Fatalf("the landing did not carry exactly %s: %+v", c.wantFile, out)
				}
				if got := read(t, filepath.Join(dir, c.wantFile)); !strings.Contains(got, c.wantText) {
					t.Fatalf("%s landed as %q", c.wantFile, got)
				}
				for f, want := range map[string]string{"s1.rot": "Secret one\n", "s2.rot": "Secret two\n"} {
					if c.name == "filtered" && f == "s1.rot" {
						want += "Hello child\n"
					}
					if got := read(t, filepath.Join(dir, f)); got != want {
						t.Errorf("%s in the tree is %q, want %q (smudged)", f, got, want)
					}
				}
				if st := git(t, dir, "status", "--porcelain", "--", "s2.rot"); st != "" {
					t.Errorf("git status shows the untouched filtered file changed: %q", st)
				}
			})
		}
	}
}
