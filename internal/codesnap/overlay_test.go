package codesnap_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/isolate"
)

// overlayHosts is newHosts with an overlay cache, or a skip where this
// machine cannot mount one (the full-copy tests cover the fallback).
func overlayHosts(t *testing.T) *hosts {
	t.Helper()
	if sup := isolate.ProbeIn(t.Context(), t.TempDir()); !sup.Overlay {
		t.Skipf("overlay unavailable here (%s)", sup.Why)
	}
	return newHosts(t).withOverlay(t, true)
}

// TestOverlayCopyCostsTheDirtyState: two calls on one snapshot share one
// cached checkout of it (the base with the dirty state: issue 26, the
// dirty state once per run, not once per call); each copy's own layer
// holds only its repository's index and branch; the checkout's git status
// is the submitter's; a child that writes a file in place (and deletes and
// adds) changes neither the cached checkout nor the other copy.
func TestOverlayCopyCostsTheDirtyState(t *testing.T) {
	ctx := t.Context()
	h := overlayHosts(t)
	write(t, filepath.Join(h.repo, "a.txt"), "dirty a\n")
	write(t, filepath.Join(h.repo, "u.txt"), "untracked\n")
	os.Remove(filepath.Join(h.repo, "b.txt"))
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	want := withoutIgnored(tree(t, h.repo))
	one, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "one"})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Cleanup()
	two, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "two"})
	if err != nil {
		t.Fatal(err)
	}
	defer two.Cleanup()
	if one.Mount == nil || one.Root != two.Root {
		t.Fatalf("copies at %s and %s (mount %v); want overlays over one checkout", one.Root, two.Root, one.Mount)
	}
	if trees, _ := filepath.Glob(filepath.Join(h.cache.Dir, "trees", "*.lock")); len(trees) != 1 {
		t.Fatalf("base checkouts: %v", trees)
	}
	upper := layer(t, one.Mount.Upper)
	if upper[".git/HEAD"] != "ref: refs/heads/main\n" {
		t.Errorf("the copy's HEAD: %q; want the submitter's branch", upper[".git/HEAD"])
	}
	if upper[".git/index"] == "" {
		t.Error("the copy's layer has no verified index")
	}
	delete(upper, ".git/HEAD")
	delete(upper, ".git/index")
	delete(upper, ".git/refs/heads/main")
	if len(upper) != 0 {
		t.Fatalf("the copy's own layer holds %v; want nothing of the dirty state (the shared checkout has it)", upper)
	}
	base := tree(t, one.Root)
	if !strings.HasSuffix(base["a.txt"], ":dirty a\n") || !strings.HasSuffix(base["u.txt"], ":untracked\n") || base["b.txt"] != "" {
		t.Fatalf("the shared checkout holds %v; want the submitter's tree", base)
	}
	index := read(t, filepath.Join(one.Root, ".git", "index"))
	inCopy(t, one, viewOp{Sh: "echo more >> sub/c.go && rm bin.dat && echo new > sub/new.go && chmod +x a.txt && git status --porcelain >/dev/null"})
	if got := tree(t, one.Root); !mapsEqual(got, base) {
		t.Errorf("the cached checkout changed under a child's writes:\n%v\nwas\n%v", got, base)
	}
	status := func(dir string) string {
		cmd := exec.Command("git", "status", "--porcelain")
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git status in %s: %v", dir, err)
		}
		return string(out)
	}
	if got, want := status(one.Root), status(h.repo); got != want {
		t.Errorf("the cached checkout's status is %q, the submitter's %q", got, want)
	}
	defer func() {
		// Nothing brood or the child did wrote the checkout's index (ours
		// are links git replaces, the child's is copied up).
		if read(t, filepath.Join(one.Root, ".git", "index")) != index {
			t.Error("the cached checkout's index was written")
		}
	}()
	sameTree(t, want, copyTree(t, two))
	res, err := one.Result(ctx, h.store)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Files, ",") != "a.txt,bin.dat,sub/c.go,sub/new.go" {
		t.Fatalf("the child's change touches %v", res.Files)
	}
	two2, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "after", Partial: res})
	if err != nil {
		t.Fatal(err)
	}
	defer two2.Cleanup()
	view := copyTree(t, two2)
	if _, ok := view["bin.dat"]; ok || !strings.HasSuffix(view["sub/c.go"], "package sub\nmore\n") || view["a.txt"] != "---x------:dirty a\n" {
		t.Fatalf("snapshot plus the partial change, seen from a new copy: %v", view)
	}
}

// TestOverlayShapes: what the snapshot deletes is gone from the view (a
// directory it removed whole too, not left empty), a file that replaced a
// directory and a directory that replaced a file show as such, and the
// child starts in a directory only the dirty state has.
func TestOverlayShapes(t *testing.T) {
	ctx := t.Context()
	h := overlayHosts(t)
	write(t, filepath.Join(h.repo, "gone", "x.txt"), "x\n")
	write(t, filepath.Join(h.repo, "gone", "deeper", "y.txt"), "y\n")
	write(t, filepath.Join(h.repo, "tofile", "z.txt"), "z\n")
	write(t, filepath.Join(h.repo, "todir"), "a file\n")
	git(t, h.repo, "add", "-A")
	git(t, h.repo, "commit", "-q", "-m", "shapes")
	git(t, h.repo, "push", "-q", "origin", "main")
	os.RemoveAll(filepath.Join(h.repo, "gone"))
	os.RemoveAll(filepath.Join(h.repo, "tofile"))
	write(t, filepath.Join(h.repo, "tofile"), "now a file\n")
	os.Remove(filepath.Join(h.repo, "todir"))
	write(t, filepath.Join(h.repo, "todir", "inside.txt"), "now a directory\n")
	write(t, filepath.Join(h.repo, "fresh", "dir", "f.txt"), "only in the dirty state\n")
	snap, err := codesnap.Capture(ctx, h.store, filepath.Join(h.repo, "fresh", "dir"))
	if err != nil {
		t.Fatal(err)
	}
	co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "shapes"})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Cleanup()
	out := inCopy(t, co, viewOp{List: true, Cwd: true, Sh: "test ! -e gone && echo no-gone; test -f tofile && echo file; test -d todir && echo dir"})
	if out.Out != "no-gone\nfile\ndir\n" {
		t.Errorf("the view: %q", out.Out)
	}
	got := map[string]string{}
	for k, v := range out.Tree {
		got[k] = string(v)
	}
	sameTree(t, withoutIgnored(tree(t, h.repo)), got)
	if out.Cwd != co.Dir {
		t.Errorf("the child started in %s; want %s", out.Cwd, co.Dir)
	}
	res, err := co.Result(ctx, h.store)
	if err != nil || res.Patch != nil {
		t.Fatalf("a child that changed nothing: %+v, %v", res, err)
	}
}

// TestPruneTrees: a base checkout a live copy holds stays; once no copy
// holds it and it has not been used for TreeTTL, it goes; the next copy
// makes it again.
func TestPruneTrees(t *testing.T) {
	ctx := t.Context()
	h := overlayHosts(t)
	h.cache.TreeTTL = 1 // any time since its last use is long enough
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "held"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := h.cache.PruneTrees(ctx); err != nil || n != 0 {
		t.Fatalf("pruned %d (%v) while a copy holds the checkout", n, err)
	}
	if _, err := os.Stat(co.Root); err != nil {
		t.Fatal(err)
	}
	co.Cleanup()
	if n, err := h.cache.PruneTrees(ctx); err != nil || n != 1 {
		t.Fatalf("pruned %d (%v); want the unused checkout", n, err)
	}
	if _, err := os.Stat(co.Root); err == nil {
		t.Fatal("the pruned checkout is still there")
	}
	var wg sync.WaitGroup
	cos := make([]*codesnap.Checkout, 3)
	errs := make([]error, 3)
	for i := range cos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cos[i], errs[i] = h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "again"})
		}()
	}
	wg.Wait()
	for i, c := range cos {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		defer c.Cleanup()
		if v := copyTree(t, c); !strings.HasSuffix(v["b.txt"], ":bee\nbuzz\n") {
			t.Errorf("copy %d after the prune: %v", i, v)
		}
	}
}

// layer lists an upper layer: files by content, whiteouts as "whiteout".
func layer(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeCharDevice != 0 {
			out[rel] = "whiteout"
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestReadOnlyCopyIsTheSharedCheckout: a read-only call's copy of a dirty
// snapshot is the cache's verified checkout of it, with no layer or mount
// of its own, and brings back no change; a retry's partial change (or a
// writer) still gets an overlay.
func TestReadOnlyCopyIsTheSharedCheckout(t *testing.T) {
	ctx := t.Context()
	h := overlayHosts(t)
	write(t, filepath.Join(h.repo, "a.txt"), "dirty a\n")
	write(t, filepath.Join(h.repo, "u.txt"), "untracked\n")
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "reader", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Cleanup()
	w, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "writer"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Cleanup()
	if ro.Mount != nil || ro.Root != w.Root || w.Mount == nil {
		t.Fatalf("reader at %s (mount %v), writer at %s (mount %v); want the reader in the writer's lower checkout, unmounted", ro.Root, ro.Mount, w.Root, w.Mount)
	}
	got := tree(t, ro.Dir)
	if !strings.HasSuffix(got["a.txt"], ":dirty a\n") || !strings.HasSuffix(got["u.txt"], ":untracked\n") {
		t.Fatalf("the reader sees %v; want the submitter's tree", got)
	}
	if res, err := ro.Result(ctx, h.store); err != nil || res.Patch != nil {
		t.Fatalf("a reader's change: %+v %v; want none", res, err)
	}
	writeIn(t, w, map[string]string{"half.txt": "half\n"})
	part, err := w.Result(ctx, h.store)
	if err != nil || part.Patch == nil {
		t.Fatalf("the writer's change: %+v %v", part, err)
	}
	retry, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "retry", ReadOnly: true, Partial: part})
	if err != nil {
		t.Fatal(err)
	}
	defer retry.Cleanup()
	if retry.Mount == nil || copyTree(t, retry)["half.txt"] != "----------:half\n" {
		t.Fatalf("a read-only call with a partial change: mount %v, view %v", retry.Mount, copyTree(t, retry))
	}
}

// TestReadOnlyCopyIsTheSubmittersTree: a read-only call reads the shared
// checkout only when it is the tree the submitter sent; a snapshot whose
// tree is not what its base (and dirty patch) make is refused, not run on
// other code.
func TestReadOnlyCopyIsTheSubmittersTree(t *testing.T) {
	for _, dirty := range []bool{false, true} {
		t.Run(map[bool]string{false: "clean", true: "dirty"}[dirty], func(t *testing.T) {
			ctx := t.Context()
			h := overlayHosts(t)
			if dirty {
				write(t, filepath.Join(h.repo, "a.txt"), "dirty a\n")
			}
			snap, err := codesnap.Capture(ctx, h.store, h.repo)
			if err != nil {
				t.Fatal(err)
			}
			ro, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "reader", ReadOnly: true})
			if err != nil {
				t.Fatalf("the submitter's own snapshot: %v", err)
			}
			ro.Cleanup()
			other := *snap
			other.Tree = strings.TrimSpace(git(t, h.repo, "mktree", "--missing"))
			if _, err := h.cache.Materialise(ctx, h.store, &other, codesnap.Options{ID: "liar", ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "is not the submitter's") {
				t.Fatalf("a snapshot naming another tree: %v; want a refusal", err)
			}
		})
	}
}
