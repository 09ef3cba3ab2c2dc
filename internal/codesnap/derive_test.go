package codesnap_test

import (
	"bytes"
	"compress/zlib"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/codesnap"
)

// derivation is a worker that has made the lower checkout of one dirty
// state (first, at firstRoot) and the submitter's next dirty state
// (second), which differs by a few files: one changed, one added, a whole
// directory deleted, one made executable, a symlink retargeted.
type derivation struct {
	h             *hosts
	first, second *codesnap.Snapshot
	firstRoot     string
	inodes        map[string]uint64 // of the first checkout's files
	held          *codesnap.Checkout
}

// keeps is how many untracked files the dirty states share: the few
// that differ are a small share of the tree (farShare).
const keeps = 40

// unchanged are paths the second dirty state leaves as the first had them.
var unchanged = []string{"a.txt", "b.txt", "bin.dat", "sub/c.go", "keep/k0.txt", "keep/k7.txt"}

// newDerivation makes it; hold keeps the first copy (and so the shared
// lock on its checkout) until the test ends.
func newDerivation(t *testing.T, hold bool) *derivation {
	t.Helper()
	ctx := t.Context()
	d := &derivation{h: overlayHosts(t), inodes: map[string]uint64{}}
	repo := d.h.repo
	write(t, filepath.Join(repo, "a.txt"), "dirty a\n")
	for i := range keeps {
		write(t, filepath.Join(repo, "keep", "k"+strconv.Itoa(i)+".txt"), "keep "+strconv.Itoa(i)+"\n")
	}
	write(t, filepath.Join(repo, "gone", "deep", "g.txt"), "gone\n")
	write(t, filepath.Join(repo, "chg.txt"), "before\n")
	write(t, filepath.Join(repo, "run.sh"), "#!/bin/sh\necho hi\n")
	noErr(t, os.Symlink("a.txt", filepath.Join(repo, "link")))
	var err error
	if d.first, err = codesnap.Capture(ctx, d.h.store, repo); err != nil {
		t.Fatal(err)
	}
	co, err := d.h.cache.Materialise(ctx, d.h.store, d.first, codesnap.Options{ID: "first", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	d.firstRoot = co.Root
	for p := range tree(t, co.Root) {
		st, err := os.Lstat(filepath.Join(co.Root, p))
		noErr(t, err)
		d.inodes[p] = st.Sys().(*syscall.Stat_t).Ino
	}
	if hold {
		d.held = co
		t.Cleanup(func() { co.Cleanup() })
	} else {
		co.Cleanup()
	}
	write(t, filepath.Join(repo, "chg.txt"), "after, and longer\n")
	write(t, filepath.Join(repo, "new", "n.txt"), "new\n")
	noErr(t, os.RemoveAll(filepath.Join(repo, "gone")))
	noErr(t, os.Chmod(filepath.Join(repo, "run.sh"), 0o755))
	noErr(t, os.Remove(filepath.Join(repo, "link")))
	noErr(t, os.Symlink("b.txt", filepath.Join(repo, "link")))
	if d.second, err = codesnap.Capture(ctx, d.h.store, repo); err != nil {
		t.Fatal(err)
	}
	return d
}

// materialise makes a read-only copy of snap (the lower checkout itself)
// with c, and returns it with the git commands it ran (git's trace2).
func (d *derivation) materialise(t *testing.T, c *codesnap.Cache, snap *codesnap.Snapshot, id string) (*codesnap.Checkout, map[string]int, error) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "trace")
	t.Setenv("GIT_TRACE2_EVENT", trace)
	co, err := c.Materialise(t.Context(), d.h.store, snap, codesnap.Options{ID: id, ReadOnly: true})
	t.Setenv("GIT_TRACE2_EVENT", "")
	if err == nil {
		t.Cleanup(func() { co.Cleanup() })
	}
	return co, trace2Commands(t, trace), err
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	st, err := os.Lstat(p)
	noErr(t, err)
	return st.Sys().(*syscall.Stat_t).Ino
}

// TestDerivedCheckoutWritesOnlyWhatChanged: a worker's checkout of a
// submitter's next dirty state is made from its checkout of the previous
// one: only the files that differ are written (the others keep their
// inodes), nothing is hashed but those (no checkout-index, no update-index
// --refresh; the child's index made from the donor's, no second
// read-tree), the previous checkout is gone (moved, not copied), and the
// result is what a fresh build makes: the same files, the same index in
// the child's repository, the same .git, the same git status. Its next use
// is a stat check.
func TestDerivedCheckoutWritesOnlyWhatChanged(t *testing.T) {
	d := newDerivation(t, false)
	co, gits, err := d.materialise(t, &d.h.cache, d.second, "second")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the derived checkout's git commands: %v", gits)
	if gits["checkout-index"]+gits["update-index"] > 0 || gits["read-tree"] != 1 {
		t.Errorf("the second dirty state's checkout wrote or hashed every file, or made the child's index by git: %v; want one read-tree -m -u only", gits)
	}
	for _, p := range unchanged {
		if got := inode(t, filepath.Join(co.Root, filepath.FromSlash(p))); got != d.inodes[p] {
			t.Errorf("%s was written again (inode %d, was %d)", p, got, d.inodes[p])
		}
	}
	if _, err := os.Stat(d.firstRoot); err == nil {
		t.Errorf("the donor checkout %s is still there", d.firstRoot)
	}
	if _, err := os.Stat(filepath.Join(co.Root, "gone")); err == nil {
		t.Error("the deleted directory gone/ is still in the derived checkout")
	}
	sameTree(t, withoutIgnored(tree(t, d.h.repo)), tree(t, co.Root))

	fresh := &codesnap.Cache{Dir: filepath.Join(t.TempDir(), "cache"), Remotes: d.h.cache.Remotes, Overlay: true, UserXattr: d.h.cache.UserXattr}
	full, fullGits, err := d.materialise(t, fresh, d.second, "fresh")
	if err != nil {
		t.Fatal(err)
	}
	if fullGits["checkout-index"] == 0 {
		t.Fatalf("the fresh cache did not build in full: %v", fullGits)
	}
	sameTree(t, tree(t, full.Root), tree(t, co.Root))
	for _, args := range [][]string{{"ls-files", "-s", "--debug"}, {"status", "--porcelain=v1", "-uall"}, {"rev-parse", "HEAD"}} {
		want, got := git(t, full.Root, args...), git(t, co.Root, args...)
		if args[0] == "ls-files" { // (stat data differs; entries and flags must not)
			want, got = noStat(want), noStat(got)
		}
		if got != want {
			t.Errorf("git %s in the derived checkout:\n%s\nwant (a fresh build):\n%s", strings.Join(args, " "), got, want)
		}
	}
	gitFiles := func(root string) map[string]string {
		m := map[string]string{}
		filepath.WalkDir(filepath.Join(root, ".git"), func(p string, e os.DirEntry, err error) error {
			rel, _ := filepath.Rel(root, p)
			if err == nil && !e.IsDir() && rel != filepath.Join(".git", "index") {
				b, _ := os.ReadFile(p)
				m[rel] = strings.ReplaceAll(string(b), fresh.Dir, d.h.cache.Dir)
			}
			return nil
		})
		return m
	}
	if got, want := gitFiles(co.Root), gitFiles(full.Root); !mapsEqual(got, want) {
		t.Errorf("the derived checkout's .git: %v; a fresh build's: %v", got, want)
	}

	// A writer's copy over it is the submitter's tree; the next use of
	// the derived checkout is a stat check.
	w, err := d.h.cache.Materialise(t.Context(), d.h.store, d.second, codesnap.Options{ID: "writer"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Cleanup()
	sameTree(t, withoutIgnored(tree(t, d.h.repo)), copyTree(t, w))
	_, again, err := d.materialise(t, &d.h.cache, d.second, "again")
	if err != nil {
		t.Fatal(err)
	}
	if again["read-tree"]+again["update-index"]+again["checkout-index"] > 0 {
		t.Errorf("a later copy of the derived checkout ran %v; want a stat check", again)
	}
}

// noStat is `git ls-files -s --debug` without the stat data lines.
func noStat(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasSuffix(f[0], ":") && f[0] != "flags:" {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// TestDonorMustBeFreeAndUntouched: a checkout is a donor only when no
// copy holds it, it is still its verified tree, it is a dirty one, and it
// differs from the new tree in at most a quarter of its files;
// otherwise the next dirty state's checkout is made in full, and the
// checkout that was not taken is left as it was.
func TestDonorMustBeFreeAndUntouched(t *testing.T) {
	cases := []struct {
		name   string
		hold   bool
		tamper func(t *testing.T, root string)
		far    bool // the next state differs in most files: left for its own next state
		attrs  bool // the next state changes .gitattributes: the kept files' bytes could differ
	}{
		{"in use", true, nil, false, false},
		{"far from the next", false, nil, true, false},
		{"attributes changed", false, nil, false, true},
		{"overwritten", false, func(t *testing.T, root string) {
			write(t, filepath.Join(root, "keep", "k3.txt"), "evil\n")
		}, false, false},
		{"same size and mtime", false, func(t *testing.T, root string) {
			p := filepath.Join(root, "keep", "k3.txt")
			st, err := os.Stat(p)
			noErr(t, err)
			write(t, p, "EVIL 3\n")
			noErr(t, os.Chtimes(p, st.ModTime(), st.ModTime()))
		}, false, false},
		{"file added", false, func(t *testing.T, root string) {
			write(t, filepath.Join(root, "keep", "zz_evil.txt"), "evil\n")
		}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newDerivation(t, tc.hold)
			before := tree(t, d.firstRoot)
			if tc.tamper != nil {
				tc.tamper(t, d.firstRoot)
			}
			if tc.far || tc.attrs {
				for i := range keeps {
					if tc.far {
						write(t, filepath.Join(d.h.repo, "keep", "k"+strconv.Itoa(i)+".txt"), "far "+strconv.Itoa(i)+"\n")
					}
				}
				if tc.attrs {
					write(t, filepath.Join(d.h.repo, "keep", ".gitattributes"), "*.txt eol=crlf\n")
				}
				var err error
				if d.second, err = codesnap.Capture(t.Context(), d.h.store, d.h.repo); err != nil {
					t.Fatal(err)
				}
			}
			co, gits, err := d.materialise(t, &d.h.cache, d.second, "second")
			if err != nil {
				t.Fatal(err)
			}
			if gits["checkout-index"] == 0 {
				t.Errorf("the checkout was derived from a donor that is %s: %v", tc.name, gits)
			}
			if !tc.attrs { // (a fresh build writes CRLF there: the new attributes)
				sameTree(t, withoutIgnored(tree(t, d.h.repo)), tree(t, co.Root))
			}
			if tc.hold || tc.far || tc.attrs {
				sameTree(t, before, tree(t, d.firstRoot))
			}
		})
	}
	t.Run("a clean snapshot's base", func(t *testing.T) {
		ctx := t.Context()
		h := overlayHosts(t)
		clean, err := codesnap.Capture(ctx, h.store, h.repo)
		if err != nil {
			t.Fatal(err)
		}
		d := &derivation{h: h}
		base, _, err := d.materialise(t, &h.cache, clean, "clean")
		if err != nil {
			t.Fatal(err)
		}
		base.Cleanup()
		write(t, filepath.Join(h.repo, "a.txt"), "dirty a\n")
		dirty, err := codesnap.Capture(ctx, h.store, h.repo)
		if err != nil {
			t.Fatal(err)
		}
		_, gits, err := d.materialise(t, &h.cache, dirty, "dirty")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(base.Root, ".git")); err != nil || gits["checkout-index"] == 0 {
			t.Errorf("the clean base checkout was taken as a donor (%v; git ran %v)", err, gits)
		}
	})
}

// TestDerivedCheckoutRefusesAPoisonedBlob: a changed file's blob that is
// damaged in the worker's clone (a loose object whose content is not its
// id) is written by the derivation, hashed, and refused: no copy runs on
// it.
func TestDerivedCheckoutRefusesAPoisonedBlob(t *testing.T) {
	d := newDerivation(t, false)
	repo := d.h.repo
	clones, _ := filepath.Glob(filepath.Join(d.h.cache.Dir, "repos", "*.git"))
	if len(clones) != 1 {
		t.Fatalf("clones in the cache: %v", clones)
	}
	clone := clones[0]
	// The second dirty state's objects, in the clone as its pack would
	// put them, but for chg.txt's blob, which is poisoned.
	blob := gitIn(t, repo, "", "rev-parse", d.second.DirtyTree+":chg.txt")
	blob = strings.TrimSpace(blob)
	var ids []string
	for _, l := range strings.Split(gitIn(t, repo, "", "rev-list", "--objects", d.second.DirtyTree, "--not", d.first.DirtyTree), "\n") {
		if id, _, _ := strings.Cut(l, " "); id != "" && id != blob {
			ids = append(ids, id)
		}
	}
	pack := gitIn(t, repo, strings.Join(ids, "\n")+"\n", "pack-objects", "-q", "--stdout")
	gitIn(t, clone, pack, "unpack-objects", "-q")
	evil := "after, and EVIL!!\n" // (the same size)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("blob " + strconv.Itoa(len(evil)) + "\x00" + evil))
	zw.Close()
	obj := filepath.Join(clone, "objects", blob[:2], blob[2:])
	noErr(t, os.MkdirAll(filepath.Dir(obj), 0o755))
	noErr(t, os.WriteFile(obj, z.Bytes(), 0o444))

	co, gits, err := d.materialise(t, &d.h.cache, d.second, "second")
	if err == nil {
		t.Fatalf("a copy was made over a poisoned blob (chg.txt: %q; git ran %v)", read(t, filepath.Join(co.Root, "chg.txt")), gits)
	}
	t.Logf("refused: %v", err)
	if !strings.Contains(err.Error(), "chg.txt") {
		t.Errorf("the refusal does not name the file: %v", err)
	}
	if gits["checkout-index"] > 0 {
		t.Errorf("the poisoned blob was refused by a full build, not by the derivation's check: %v (%v)", gits, err)
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestTwoNextStatesShareNoDonor: two new dirty states made at once in one
// worker process, both near the one checkout it holds: one may take it,
// the other is made in full, and each copy is its own submitter's tree.
func TestTwoNextStatesShareNoDonor(t *testing.T) {
	d := newDerivation(t, false)
	wantSecond := withoutIgnored(tree(t, d.h.repo))
	write(t, filepath.Join(d.h.repo, "keep", "k5.txt"), "third\n")
	third, err := codesnap.Capture(t.Context(), d.h.store, d.h.repo)
	if err != nil {
		t.Fatal(err)
	}
	wantThird := withoutIgnored(tree(t, d.h.repo))
	type got struct {
		co  *codesnap.Checkout
		err error
	}
	res := make(chan got, 2)
	for i, snap := range []*codesnap.Snapshot{d.second, third} {
		go func() {
			co, err := d.h.cache.Materialise(t.Context(), d.h.store, snap, codesnap.Options{ID: "n" + strconv.Itoa(i), ReadOnly: true})
			res <- got{co, err}
		}()
	}
	var cos []*codesnap.Checkout
	for range 2 {
		r := <-res
		if r.err != nil {
			t.Fatal(r.err)
		}
		defer r.co.Cleanup()
		cos = append(cos, r.co)
	}
	if cos[0].Root == cos[1].Root {
		t.Fatalf("both states in one checkout %s", cos[0].Root)
	}
	for _, co := range cos {
		if got := tree(t, co.Root); got["keep/k5.txt"] == "----------:third\n" {
			sameTree(t, wantThird, got)
		} else {
			sameTree(t, wantSecond, got)
		}
	}
}
