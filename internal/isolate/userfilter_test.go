//go:build linux

package isolate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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

// TestFilteredLandsWithTheSnapshotsAttributes (review30 P2-2): the user's
// tree has .gitattributes other than HEAD's for the user's kept filter
// pair (uncommitted: a `git lfs track` adds a pattern, or a line is taken
// out). A writer's file lands as the child wrote it, hashed and written
// with the same attributes (the spawn snapshot's), and a file it only
// touched does not land at all, in both copies.
func TestFilteredLandsWithTheSnapshotsAttributes(t *testing.T) {
	iso := testIsolator(t)
	global := filepath.Join(t.TempDir(), "gitconfig")
	rot := "tr A-Za-z N-ZA-Mn-za-m"
	write(t, global, "[filter \"rot\"]\n\tclean = "+rot+"\n\tsmudge = "+rot+"\n\trequired = true\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	for _, m := range modes(t, iso) {
		for _, c := range []struct {
			name, treeAttrs, script string
			files                   []string
			want                    map[string]string
			later                   string // the tree's .gitattributes once the child ran
		}{
			{"tree adds a pattern", "*.rot filter=rot\n*.x filter=rot\n", "echo 'Child line' >> s.x",
				[]string{"s.x"}, map[string]string{"s.x": "Plain x\nChild line\n", "s1.rot": "Secret one\n"}, ""},
			{"tree drops the filter, file touched", "# off here\n", "touch s1.rot && sed -i 's/^a5$/a5 child/' a.txt",
				[]string{"a.txt"}, map[string]string{"s1.rot": "Secret one\n", "s.x": "Plain x\n"}, ""},
			{"tree drops the filter, file edited", "# off here\n", "echo 'Hello child' >> s1.rot",
				[]string{"s1.rot"}, map[string]string{"s1.rot": "Secret one\nHello child\n", "s.x": "Plain x\n"}, ""},
			{"the user adds a pattern meanwhile", "*.rot filter=rot\n", "echo 'New x' > n.x",
				[]string{"n.x"}, map[string]string{"n.x": "New x\n"}, "*.rot filter=rot\n*.x filter=rot\n"},
		} {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				dir := newRepo(t)
				write(t, filepath.Join(dir, ".gitattributes"), "*.rot filter=rot\n")
				write(t, filepath.Join(dir, "s1.rot"), "Secret one\n")
				write(t, filepath.Join(dir, "s.x"), "Plain x\n")
				old := time.Now().Add(-time.Hour) // (no racily clean entry: git re-hashes none)
				for _, f := range []string{"s1.rot", "s.x"} {
					if err := os.Chtimes(filepath.Join(dir, f), old, old); err != nil {
						t.Fatal(err)
					}
				}
				git(t, dir, "add", ".gitattributes", "s1.rot", "s.x")
				git(t, dir, "commit", "-qm", "filtered")
				write(t, filepath.Join(dir, ".gitattributes"), c.treeAttrs)
				// The files the change concerns are touched since (as a user
				// who edits after `git lfs track`): git hashes them anew
				// with the tree's attributes, and the snapshot has them so.
				now := time.Now()
				for _, f := range []string{"s1.rot", "s.x"} {
					if err := os.Chtimes(filepath.Join(dir, f), now, now); err != nil {
						t.Fatal(err)
					}
				}
				ws := prepare(t, iso, dir, "R", m.force)
				runIsolated(t, ws, c.script)
				if c.later != "" {
					write(t, filepath.Join(dir, ".gitattributes"), c.later)
				}
				out, err := ws.Finish(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if !out.Applied || !slices.Equal(out.Files, c.files) {
					t.Errorf("outcome %+v, want %v applied", out, c.files)
				}
				for f, want := range c.want {
					if got := read(t, filepath.Join(dir, f)); got != want {
						t.Errorf("%s in the tree is %q, want %q (what the child left there)", f, got, want)
					}
				}
			})
		}
	}
}

// TestUserFiltersReadsOnlyAttributes (review30 P3-2): finding the kept
// filters reads HEAD's .gitattributes, at the top and nested, and runs
// no git command that lists the whole tree (ls-tree -r printed every
// path of a monorepo's HEAD at each repository open, once `git lfs
// install` had put a filter in ~/.gitconfig); in a SHA-1 and a SHA-256
// repository.
func TestUserFiltersReadsOnlyAttributes(t *testing.T) {
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, "[filter \"rot\"]\n\tclean = cat\n\tsmudge = cat\n[filter \"deep\"]\n\tclean = cat\n\tsmudge = cat\n[filter \"unused\"]\n\tclean = cat\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			git(t, dir, "init", "-q", "--object-format="+format)
			write(t, filepath.Join(dir, "a.txt"), "a\n")
			write(t, filepath.Join(dir, ".gitattributes"), "*.rot filter=rot\n")
			write(t, filepath.Join(dir, "a/b/.gitattributes"), "*.d filter=deep\n")
			write(t, filepath.Join(dir, "a/b/notattrs.gitattributes"), "*.u filter=unused\n")
			git(t, dir, "add", "-A")
			git(t, dir, "commit", "-qm", "attrs")
			trace := filepath.Join(t.TempDir(), "trace")
			t.Setenv("GIT_TRACE", trace)
			r, err := openRepo(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			got := r.keptFilters(context.Background())
			slices.Sort(got)
			if !slices.Equal(got, []string{"deep", "rot"}) {
				t.Errorf("kept filters %v, want [deep rot]", got)
			}
			b, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(b), "\n") {
				if strings.Contains(line, "trace: built-in: git ls-tree") || strings.Contains(line, "trace: built-in: git ls-files") {
					t.Errorf("a git command that lists the tree: %s", line)
				}
			}
		})
	}
}

// TestLandingKeepsLineEndingAttributes: in a repository with no filter of
// the user's, the landing still writes a child's new file with the line
// endings the tree's .gitattributes ask for (the attributes come from the
// tree there: nothing was seeded), as git checkout does.
func TestLandingKeepsLineEndingAttributes(t *testing.T) {
	iso := testIsolator(t)
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	for _, m := range modes(t, iso) {
		t.Run(m.name, func(t *testing.T) {
			dir := newRepo(t)
			write(t, filepath.Join(dir, ".gitattributes"), "*.crlf text eol=crlf\n")
			git(t, dir, "add", ".gitattributes")
			git(t, dir, "commit", "-qm", "eol")
			ws := prepare(t, iso, dir, "E", m.force)
			runIsolated(t, ws, `printf 'one\ntwo\n' > n.crlf`)
			out, err := ws.Finish(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := read(t, filepath.Join(dir, "n.crlf")); !out.Applied || got != "one\r\ntwo\r\n" {
				t.Errorf("n.crlf landed as %q (outcome %+v), want CRLF line endings", got, out)
			}
		})
	}
}
