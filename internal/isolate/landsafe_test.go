//go:build linux

package isolate

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treeDigest is every entry of the work tree at dir but .git and .brood:
// its type, mode and content (a link's target), so two digests are equal
// only when the tree is byte-identical.
func treeDigest(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".brood") {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tgt, _ := os.Readlink(p)
			out[rel] = "link " + tgt
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			out[rel] = fmt.Sprintf("file %v %x", fi.Mode().Perm(), sha256.Sum256(b))
		default:
			out[rel] = "dir"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed: %q -> %q", p, v, after[p])
		}
	}
	for p, v := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared: %q", p, v)
		}
	}
}

// TestIsolatedLandingWholeOrNothing (review18 X3): an isolated writer's
// patch that fails partway into the user's tree (git apply wrote the first
// file, then could not write the second) leaves the tree byte-identical,
// says it did not apply and keeps the patch. A patch whose second file
// conflicts does the same.
func TestIsolatedLandingWholeOrNothing(t *testing.T) {
	iso := testIsolator(t)
	cases := []struct {
		name   string
		child  string
		parent func(t *testing.T, dir string)
	}{
		{"a later file cannot be written (its directory became a file)",
			`sed -i 's/^a9$/a9 child/' a.txt; mkdir -p newdir; echo new > newdir/n.txt`,
			func(t *testing.T, dir string) { write(t, filepath.Join(dir, "newdir"), "the user's file\n") }},
		{"a later file conflicts",
			`sed -i 's/^a9$/a9 child/' a.txt; sed -i 's/^b5$/b5 child/' sub/b.txt`,
			func(t *testing.T, dir string) {
				write(t, filepath.Join(dir, "sub/b.txt"), strings.Replace(lines("b", 10), "b5\n", "b5 parent\n", 1))
			}},
	}
	for _, m := range modes(t, iso) {
		for _, c := range cases {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				dir := newRepo(t)
				ws := prepare(t, iso, dir, "X3", m.force)
				if _, err := ws.snap.wait(); err != nil {
					t.Fatal(err)
				}
				runIsolated(t, ws, c.child)
				c.parent(t, dir)
				before := treeDigest(t, dir)
				out, err := ws.Finish(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				sameTree(t, before, treeDigest(t, dir))
				if out.Applied || out.Conflict == "" || len(out.Partial) > 0 {
					t.Errorf("outcome says %+v; want not applied, a conflict, nothing left partial", out)
				}
				if _, err := os.Stat(out.Patch); err != nil {
					t.Errorf("the patch is not kept: %v", err)
				}
				t.Logf("conflict: %s", out.Conflict)
			})
		}
	}
}

// TestForeignLandingWholeOrNothing is X3 for a patch made elsewhere (a
// fleet worker's, isolate.ApplyPatch): the first file applies, the second
// cannot be written, and the tree is left as it was.
func TestForeignLandingWholeOrNothing(t *testing.T) {
	dir, tree := hostileRepo(t)
	patch := "diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-bee\n+bee worker\n buzz\n" +
		"diff --git a/d/new.txt b/d/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/d/new.txt\n@@ -0,0 +1 @@\n+new\n"
	write(t, filepath.Join(dir, "d"), "the user's file\n")
	before := treeDigest(t, dir)
	state := t.TempDir()
	out, err := ApplyPatch(t.Context(), ApplyOptions{Dir: dir, Base: tree, Patch: []byte(patch), StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, before, treeDigest(t, dir))
	if out.Applied || out.Conflict == "" || out.KeptAt == "" {
		t.Errorf("outcome says %+v; want not applied, a conflict and the kept patch", out)
	}
	if _, err := os.Stat(out.Patch); err != nil {
		t.Errorf("the patch is not kept: %v", err)
	}
}

// TestIsolatedLinksOutOfTreeNotLanded (review18 R3): an isolated writer's
// symbolic link whose target leaves the tree (absolute, a ".." past the
// top, through another link, into .git or .brood) keeps the whole patch
// out of the user's tree, named; a link within the tree lands.
func TestIsolatedLinksOutOfTreeNotLanded(t *testing.T) {
	iso := testIsolator(t)
	cases := []struct {
		name, child string
		refused     string // the link named; "" when the patch lands
	}{
		{"into its task directory", `mkdir -p tools0; echo ok > tools0/x; ln -s ../.brood/dispatch/R3/evil tools`, "tools"},
		{"absolute", `echo ok > ok.txt; ln -s /root/.cache/brood/go/p/build/x Makefile`, "Makefile"},
		{"into .git's hooks", `ln -s .git/hooks hooks`, "hooks"},
		{"into .GIT in another case", `ln -s sub/../.GIT/config cfg`, "cfg"},
		{"past the top", `ln -s ../../outside up`, "up"},
		{"through a link to its own directory", `ln -s . here; ln -s here/../../outside sneaky`, "sneaky"},
		{"through a link that is absolute", `ln -s /etc e; ln -s e/passwd pw`, "e"},
		{"within the tree", `ln -s sub/b.txt doc; ln -s ../a.txt sub/up.txt`, ""},
	}
	for _, m := range modes(t, iso) {
		for _, c := range cases {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				dir := newRepo(t)
				ws := prepare(t, iso, dir, "R3", m.force)
				runIsolated(t, ws, c.child)
				before := treeDigest(t, dir)
				out, err := ws.Finish(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if c.refused == "" {
					if !out.Applied || len(out.Links) > 0 {
						t.Fatalf("links within the tree should land: %+v", out)
					}
					if tgt, err := os.Readlink(filepath.Join(dir, "doc")); err != nil || tgt != "sub/b.txt" {
						t.Errorf("doc: %q %v", tgt, err)
					}
					return
				}
				sameTree(t, before, treeDigest(t, dir))
				named := false
				for _, l := range out.Links {
					named = named || l.Path == c.refused
				}
				if out.Applied || !named || !strings.Contains(out.Conflict, c.refused) || out.KeptAt == "" {
					t.Errorf("want %s refused and named, the patch kept: %+v", c.refused, out)
				}
				if _, err := os.Stat(out.Patch); err != nil {
					t.Errorf("the patch is not kept: %v", err)
				}
				if rep := ws.Config(); len(rep.Links) == 0 {
					t.Errorf("the configuration report does not name the links: %+v", rep)
				}
			})
		}
	}
}

// TestForeignLinkOutOfTreeNotLanded: the same for a fleet worker's patch.
func TestForeignLinkOutOfTreeNotLanded(t *testing.T) {
	dir, tree := hostileRepo(t)
	patch := "diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-x\n+x2\n" +
		"diff --git a/Makefile b/Makefile\nnew file mode 120000\n--- /dev/null\n+++ b/Makefile\n@@ -0,0 +1 @@\n+../.brood/dispatch/01J/evil\n\\ No newline at end of file\n"
	before := treeDigest(t, dir)
	out, err := ApplyPatch(t.Context(), ApplyOptions{Dir: dir, Base: tree, Patch: []byte(patch), StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, before, treeDigest(t, dir))
	if out.Applied || len(out.Links) != 1 || out.Links[0].Path != "Makefile" || out.KeptAt == "" {
		t.Errorf("want Makefile refused and named, the patch kept: %+v", out)
	}
}

// TestEscapingLinksInPlace: what an in-place writer's parent finds among
// the paths it changed, and removes (the link, never its target), and the
// files it names for having other names.
func TestEscapingLinksInPlace(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "evil")
	write(t, outside, "payload\n")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(dir, "Makefile")))
	must(os.Symlink("../.brood/dispatch/X/evil", filepath.Join(dir, "tools")))
	must(os.Symlink("a.txt", filepath.Join(dir, "fine")))
	must(os.Link(outside, filepath.Join(dir, "hard.txt")))
	changed := []string{"Makefile", "tools", "fine", "a.txt", "hard.txt", "gone"}
	links := EscapingLinks(dir, changed)
	if len(links) != 2 || links[0].Path != "Makefile" || links[1].Path != "tools" {
		t.Fatalf("escaping links: %+v", links)
	}
	removed, failed := RemoveLinks(dir, links)
	if len(removed) != 2 || len(failed) != 0 {
		t.Fatalf("removed %+v, failed %v", removed, failed)
	}
	for _, p := range []string{"Makefile", "tools"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if read(t, outside) != "payload\n" {
		t.Errorf("the link's target was touched")
	}
	if _, err := os.Readlink(filepath.Join(dir, "fine")); err != nil {
		t.Errorf("a link within the tree was removed: %v", err)
	}
	if got := SharedFiles(dir, changed); len(got) != 1 || !strings.HasPrefix(got[0], "hard.txt ") {
		t.Errorf("shared files: %v", got)
	}
}
