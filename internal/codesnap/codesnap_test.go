package codesnap_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/codesnap"
)

// A test has two "hosts": the submitter's repository (with a bare origin
// beside it) and a worker with its own cache directory, sharing one store
// directory.
type hosts struct {
	repo, origin string
	store        *blobstore.Store
	storeDir     string
	cache        codesnap.Cache
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newHosts makes a repository with two commits pushed to origin.
func newHosts(t testing.TB) *hosts {
	t.Helper()
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	root := t.TempDir()
	// The submitter's state (its capture index, its chain records) is the test's own.
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "submitter", "state"))
	h := &hosts{repo: filepath.Join(root, "submitter", "repo"), origin: filepath.Join(root, "origin.git"), storeDir: filepath.Join(root, "store")}
	// The worker fetches from origin because its own allowlist names it.
	h.cache = codesnap.Cache{Dir: filepath.Join(root, "worker", "cache"), Remotes: []string{h.origin}}
	os.MkdirAll(h.repo, 0o755)
	os.MkdirAll(h.storeDir, 0o755)
	git(t, root, "init", "-q", "--bare", "-b", "main", h.origin)
	git(t, h.repo, "init", "-q", "-b", "main")
	// No background gc or maintenance: nothing may write in the
	// repository after the test ends.
	git(t, h.repo, "config", "gc.auto", "0")
	git(t, h.repo, "config", "maintenance.auto", "false")
	write(t, filepath.Join(h.repo, "a.txt"), "one\ntwo\nthree\nfour\nfive\nsix\nseven\n")
	write(t, filepath.Join(h.repo, "b.txt"), "bee\n")
	write(t, filepath.Join(h.repo, "sub", "c.go"), "package sub\n")
	write(t, filepath.Join(h.repo, ".gitignore"), ".env\nnode_modules/\n")
	write(t, filepath.Join(h.repo, "bin.dat"), "\x00\x01\x02binary\x00")
	git(t, h.repo, "add", "-A")
	git(t, h.repo, "commit", "-q", "-m", "first")
	write(t, filepath.Join(h.repo, "b.txt"), "bee\nbuzz\n")
	git(t, h.repo, "commit", "-q", "-am", "second")
	git(t, h.repo, "remote", "add", "origin", h.origin)
	git(t, h.repo, "push", "-q", "-u", "origin", "main")
	s, err := blobstore.Open(t.Context(), "file://"+h.storeDir)
	if err != nil {
		t.Fatal(err)
	}
	h.store = s
	return h
}

// tree lists a directory as path -> mode and content (links as targets),
// leaving out .git.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out, err := treeOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func withoutIgnored(m map[string]string, ignored ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		skip := false
		for _, ig := range ignored {
			if k == ig || strings.HasPrefix(k, ig+"/") {
				skip = true
			}
		}
		if !skip {
			out[k] = v
		}
	}
	return out
}

func sameTree(t *testing.T, want, got map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: copy has %.60q, want %.60q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: in the copy, not in the submitter's tree", k)
		}
	}
}

func TestMaterialiseAndApply(t *testing.T) {
	big := make([]byte, 5<<20)
	rand.Read(big)
	cases := []struct {
		name  string
		dirty func(t *testing.T, h *hosts)
	}{
		{"clean", func(t *testing.T, h *hosts) {}},
		{"modified deleted untracked ignored", func(t *testing.T, h *hosts) {
			write(t, filepath.Join(h.repo, "a.txt"), "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\n")
			os.Remove(filepath.Join(h.repo, "b.txt"))
			write(t, filepath.Join(h.repo, "new", "untracked.txt"), "not yet added\n")
			write(t, filepath.Join(h.repo, ".env"), "SECRET=hunter2\n")
			write(t, filepath.Join(h.repo, "node_modules", "x", "index.js"), "ignored\n")
			write(t, filepath.Join(h.repo, "local-only.log"), "excluded by info/exclude\n")
			write(t, filepath.Join(h.repo, ".git", "info", "exclude"), "*.log\n")
		}},
		{"staged and unstaged", func(t *testing.T, h *hosts) {
			write(t, filepath.Join(h.repo, "a.txt"), "staged\n")
			git(t, h.repo, "add", "a.txt")
			write(t, filepath.Join(h.repo, "a.txt"), "staged then changed again\n")
		}},
		{"binary mode symlink rename", func(t *testing.T, h *hosts) {
			write(t, filepath.Join(h.repo, "bin.dat"), "\x00\xff\x00changed binary\x00")
			write(t, filepath.Join(h.repo, "new.bin"), "\x00\x00new binary\x01")
			os.Chmod(filepath.Join(h.repo, "sub", "c.go"), 0o755)
			os.Symlink("a.txt", filepath.Join(h.repo, "link"))
			git(t, h.repo, "mv", "b.txt", "renamed.txt")
		}},
		{"large untracked file", func(t *testing.T, h *hosts) {
			os.WriteFile(filepath.Join(h.repo, "big.bin"), big, 0o644)
		}},
		{"unpushed commits", func(t *testing.T, h *hosts) {
			write(t, filepath.Join(h.repo, "local.txt"), "committed, not pushed\n")
			git(t, h.repo, "add", "local.txt")
			git(t, h.repo, "commit", "-q", "-m", "local")
			write(t, filepath.Join(h.repo, "a.txt"), "dirty on top\n")
		}},
		{"detached HEAD", func(t *testing.T, h *hosts) {
			git(t, h.repo, "checkout", "-q", "--detach", "HEAD~1")
			write(t, filepath.Join(h.repo, "a.txt"), "dirty on a detached HEAD\n")
		}},
		{"no remote", func(t *testing.T, h *hosts) {
			git(t, h.repo, "remote", "remove", "origin")
			os.RemoveAll(h.origin)
			write(t, filepath.Join(h.repo, "u.txt"), "untracked\n")
		}},
		{"no commits", func(t *testing.T, h *hosts) {
			os.RemoveAll(filepath.Join(h.repo, ".git"))
			git(t, h.repo, "init", "-q", "-b", "main")
			write(t, filepath.Join(h.repo, ".env"), "SECRET=1\n")
		}},
	}
	copyModes(t, func(t *testing.T, overlay bool) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				materialiseAndApply(t, newHosts(t).withOverlay(t, overlay), tc.name, tc.dirty, big)
			})
		}
	})
}

func materialiseAndApply(t *testing.T, h *hosts, name string, dirty func(*testing.T, *hosts), big []byte) {
	ctx := t.Context()
	dirty(t, h)
	want := withoutIgnored(tree(t, h.repo), ".env", "node_modules", "local-only.log")
	snap, err := codesnap.Capture(ctx, h.store, filepath.Join(h.repo, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "task1"})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Cleanup()
	if h.cache.Overlay && snap.Base != "" && co.Mount == nil {
		t.Fatal("an overlay cache made a full copy")
	}
	if co.Dir != filepath.Join(co.Root, "sub") {
		t.Errorf("Dir %s, want Root/sub", co.Dir)
	}
	view := copyTree(t, co)
	sameTree(t, want, view)
	if _, ok := view[".env"]; ok {
		t.Fatal("an ignored .env reached the worker")
	}
	if snap.Base != "" {
		if head := strings.TrimSpace(inCopy(t, co, viewOp{Sh: "git rev-parse HEAD"}).Out); head != snap.Base {
			t.Errorf("copy HEAD %s, want %s", head, snap.Base)
		}
	}
	// The child edits, adds, removes; its change comes back whole.
	writeIn(t, co, map[string]string{
		"a.txt":               "the child's a.txt\n",
		"sub/child.go":        "package sub // by the child\n",
		"node_modules/dep.js": "ignored: never sent back\n",
		"child.log":           "ignored by the submitter's exclude\n",
	})
	res, err := co.Result(ctx, h.store)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		if strings.HasPrefix(f, "node_modules/") || (name == "modified deleted untracked ignored" && f == "child.log") {
			t.Errorf("ignored file %s in the result", f)
		}
	}
	applied, err := codesnap.Apply(ctx, h.store, h.repo, "", snap, res)
	if err != nil {
		t.Fatal(err)
	}
	if !applied.Applied {
		t.Fatalf("not applied: %s", applied.Message())
	}
	if got := read(t, filepath.Join(h.repo, "a.txt")); got != "the child's a.txt\n" {
		t.Errorf("a.txt after apply: %q", got)
	}
	if got := read(t, filepath.Join(h.repo, "sub", "child.go")); !strings.Contains(got, "by the child") {
		t.Errorf("child.go after apply: %q", got)
	}
	if _, err := os.Stat(filepath.Join(h.repo, "node_modules", "dep.js")); err == nil {
		t.Error("the child's ignored file was applied")
	}
	if name == "large untracked file" {
		if b, _ := os.ReadFile(filepath.Join(h.repo, "big.bin")); !bytes.Equal(b, big) {
			t.Error("the large file changed")
		}
	}
}

func TestApplyWholeOrNothing(t *testing.T) { copyModes(t, testApplyWholeOrNothing) }

func testApplyWholeOrNothing(t *testing.T, overlay bool) {
	ctx := t.Context()
	h := newHosts(t).withOverlay(t, overlay)
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Cleanup()
	writeIn(t, co, map[string]string{"a.txt": "one\ntwo\nchild-three\nfour\nfive\nsix\nseven\n"})
	writeIn(t, co, map[string]string{"b.txt": "bee\nbuzz\nchild\n"})
	writeIn(t, co, map[string]string{"added.txt": "new\n"})
	res, err := co.Result(ctx, h.store)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Files, []string{"a.txt", "added.txt", "b.txt"}) {
		t.Fatalf("files %v", res.Files)
	}

	// Meanwhile the user changed line three of a.txt: that hunk conflicts,
	// so neither a.txt, b.txt nor added.txt may change.
	conflicted := "one\ntwo\nuser-three\nfour\nfive\nsix\nseven\n"
	write(t, filepath.Join(h.repo, "a.txt"), conflicted)
	before := tree(t, h.repo)
	state := t.TempDir()
	out, err := codesnap.Apply(ctx, h.store, h.repo, state, snap, res)
	if err != nil {
		t.Fatal(err)
	}
	if out.Applied || out.Conflict == "" {
		t.Fatalf("applied %v, conflict %q", out.Applied, out.Conflict)
	}
	sameTree(t, before, tree(t, h.repo))
	msg := out.Message()
	for _, want := range []string{"nothing was applied", "a.txt", out.Patch} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if _, err := os.Stat(out.Patch); err != nil || !strings.HasPrefix(out.Patch, state) {
		t.Errorf("patch kept at %q: %v", out.Patch, err)
	}
	if st := git(t, h.repo, "diff", "--cached", "--name-only"); st != "" {
		t.Errorf("the index changed: %s", st)
	}

	// A child that only modified files, against a user's edit on another
	// line of the same file, merges cleanly instead; and a commit since
	// Capture is reported as the base having moved.
	co2, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "w2"})
	if err != nil {
		t.Fatal(err)
	}
	defer co2.Cleanup()
	writeIn(t, co2, map[string]string{"a.txt": "one\ntwo\nchild-three\nfour\nfive\nsix\nseven\n"})
	if res, err = co2.Result(ctx, h.store); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(h.repo, "a.txt"), "one\ntwo\nthree\nfour\nuser-five\nsix\nseven\n")
	write(t, filepath.Join(h.repo, "other.txt"), "x\n")
	git(t, h.repo, "add", "other.txt")
	git(t, h.repo, "commit", "-q", "-m", "user moved on")
	out, err = codesnap.Apply(ctx, h.store, h.repo, "", snap, res)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Applied || !out.Merged || !strings.Contains(out.BaseMoved, "HEAD moved from") {
		t.Fatalf("applied %v merged %v moved %q: %s", out.Applied, out.Merged, out.BaseMoved, out.Message())
	}
	if got := read(t, filepath.Join(h.repo, "a.txt")); got != "one\ntwo\nchild-three\nfour\nuser-five\nsix\nseven\n" {
		t.Errorf("merged a.txt: %q", got)
	}
	if !strings.Contains(out.Message(), "HEAD moved") {
		t.Errorf("message %q does not say the base moved", out.Message())
	}
}

// TestConcurrentWorkers has two workers on one host materialise the same
// repository from an empty cache at once.
func TestConcurrentWorkers(t *testing.T) { copyModes(t, testConcurrentWorkers) }

func testConcurrentWorkers(t *testing.T, overlay bool) {
	ctx := t.Context()
	h := newHosts(t).withOverlay(t, overlay)
	write(t, filepath.Join(h.repo, "a.txt"), "dirty\n")
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	want := withoutIgnored(tree(t, h.repo))
	const n = 4
	var wg sync.WaitGroup
	cos := make([]*codesnap.Checkout, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cache := codesnap.Cache{Dir: h.cache.Dir, Remotes: h.cache.Remotes, Overlay: h.cache.Overlay, UserXattr: h.cache.UserXattr} // another worker process
			cos[i], errs[i] = cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: fmt.Sprint("w", i)})
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("worker %d: %v", i, errs[i])
		}
		defer cos[i].Cleanup()
		sameTree(t, want, copyTree(t, cos[i]))
	}
	repos, _ := filepath.Glob(filepath.Join(h.cache.Dir, "repos", "*.git"))
	if len(repos) != 1 {
		t.Fatalf("cache repositories: %v", repos)
	}
}

func TestTamperedStoreIsRefused(t *testing.T) { copyModes(t, testTamperedStoreIsRefused) }

func testTamperedStoreIsRefused(t *testing.T, overlay bool) {
	ctx := t.Context()
	h := newHosts(t).withOverlay(t, overlay)
	write(t, filepath.Join(h.repo, "a.txt"), "dirty\n")
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	writeIn(t, co, map[string]string{"b.txt": "child\n"})
	res, err := co.Result(ctx, h.store)
	if err != nil {
		t.Fatal(err)
	}
	co.Cleanup()
	for _, ref := range []*blobstore.Ref{snap.Pack, res.Patch} {
		p := filepath.Join(h.storeDir, filepath.FromSlash(ref.Key))
		data := read(t, p)
		os.WriteFile(p, []byte(strings.Replace(data, "dirty", "evil!", 1)+"\n"), 0o644)
	}
	// Another worker, whose cache has no copy of the snapshot yet (this
	// one's, made from the patch before it was changed and checked
	// against the snapshot's tree, stays good).
	other := &codesnap.Cache{Dir: t.TempDir(), Overlay: h.cache.Overlay, UserXattr: h.cache.UserXattr, Remotes: h.cache.Remotes}
	if _, err := other.Materialise(ctx, h.store, snap, codesnap.Options{ID: "bad"}); !errors.Is(err, blobstore.ErrCorrupt) {
		t.Fatalf("Materialise with a tampered dirty pack: %v", err)
	}
	if overlay {
		co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "cached"})
		if err != nil {
			t.Fatalf("a copy from the checkout made before the store was changed: %v", err)
		}
		if got := copyTree(t, co)["a.txt"]; got != "----------:dirty\n" {
			t.Fatalf("the copy's a.txt is %q", got)
		}
		co.Cleanup()
	}
	before := tree(t, h.repo)
	if _, err := codesnap.Apply(ctx, h.store, h.repo, "", snap, res); !errors.Is(err, blobstore.ErrCorrupt) {
		t.Fatalf("Apply of a tampered result: %v", err)
	}
	sameTree(t, before, tree(t, h.repo))
}

// TestChildCannotSteerTheResult: what the child does to its own .git
// (a new index, HEAD elsewhere, a hook, the repository gone) changes
// nothing about the patch brood takes from its tree.
func TestChildCannotSteerTheResult(t *testing.T) { copyModes(t, testChildCannotSteerTheResult) }

func testChildCannotSteerTheResult(t *testing.T, overlay bool) {
	ctx := t.Context()
	h := newHosts(t).withOverlay(t, overlay)
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Cleanup()
	writeIn(t, co, map[string]string{"a.txt": "changed\n"})
	inCopy(t, co, viewOp{Sh: "git add -A && git commit -q -m 'the child commits'"})
	writeIn(t, co, map[string]string{".git/hooks/pre-commit": "#!/bin/sh\ntouch /tmp/pwned\n"})
	inCopy(t, co, viewOp{Remove: []string{".git"}})
	res, err := co.Result(ctx, h.store)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Files, []string{"a.txt"}) {
		t.Fatalf("files %v, want [a.txt]", res.Files)
	}
}

// TestResumeFromPartial: an attempt's partial patch seeds the copy on
// another worker.
func TestResumeFromPartial(t *testing.T) { copyModes(t, testResumeFromPartial) }

func testResumeFromPartial(t *testing.T, overlay bool) {
	ctx := t.Context()
	h := newHosts(t).withOverlay(t, overlay)
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "first"})
	if err != nil {
		t.Fatal(err)
	}
	writeIn(t, co, map[string]string{"half.txt": "half done\n"})
	partial, err := co.Result(ctx, h.store)
	if err != nil {
		t.Fatal(err)
	}
	co.Cleanup()
	other := codesnap.Cache{Dir: filepath.Join(t.TempDir(), "worker2"), Remotes: h.cache.Remotes, Overlay: h.cache.Overlay, UserXattr: h.cache.UserXattr}
	co2, err := other.Materialise(ctx, h.store, snap, codesnap.Options{ID: "retry", Partial: partial})
	if err != nil {
		t.Fatal(err)
	}
	defer co2.Cleanup()
	if got := copyTree(t, co2)["half.txt"]; !strings.HasSuffix(got, ":half done\n") {
		t.Fatalf("half.txt in the retry's copy: %q", got)
	}
	res, err := co2.Result(ctx, h.store)
	if err != nil || !slices.Equal(res.Files, []string{"half.txt"}) {
		t.Fatalf("result %+v, %v", res, err)
	}
}

func TestUnreachableBase(t *testing.T) {
	ctx := t.Context()
	h := newHosts(t)
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Bundle != nil {
		t.Fatal("a pushed base came with a bundle")
	}
	os.RemoveAll(h.origin)
	_, err = h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "x"})
	if err == nil || !strings.Contains(err.Error(), "cannot get base commit") || !strings.Contains(err.Error(), "push it") {
		t.Fatalf("err = %v", err)
	}
}

func TestCaptureOutsideGit(t *testing.T) {
	h := newHosts(t)
	_, err := codesnap.Capture(t.Context(), h.store, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "not in a git work tree") {
		t.Fatalf("err = %v", err)
	}
}

// TestConfigChangesAreHeldBack: a child on a worker cannot change the
// submitter's brood or Claude Code configuration through its patch.
func TestConfigChangesAreHeldBack(t *testing.T) { copyModes(t, testConfigChangesAreHeldBack) }

func testConfigChangesAreHeldBack(t *testing.T, overlay bool) {
	ctx := t.Context()
	h := newHosts(t).withOverlay(t, overlay)
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "cfg"})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Cleanup()
	writeIn(t, co, map[string]string{".brood/settings.toml": "[permissions]\nmode = \"bypassPermissions\"\n"})
	writeIn(t, co, map[string]string{".claude/settings.json": `{"permissions":{"allow":["Bash(*)"]}}`})
	writeIn(t, co, map[string]string{"a.txt": "ordinary change\n"})
	res, err := co.Result(ctx, h.store)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	out, err := codesnap.Apply(ctx, h.store, h.repo, state, snap, res)
	if err != nil || !out.Applied {
		t.Fatalf("apply: %v %+v", err, out)
	}
	for _, p := range []string{".brood/settings.toml", ".claude/settings.json"} {
		if _, err := os.Stat(filepath.Join(h.repo, p)); err == nil {
			t.Errorf("%s was applied", p)
		}
	}
	if got := read(t, filepath.Join(h.repo, "a.txt")); got != "ordinary change\n" {
		t.Errorf("a.txt: %q", got)
	}
	if !slices.Equal(out.ConfigRefused, []string{".brood/settings.toml", ".claude/settings.json"}) || !strings.Contains(out.Message(), "held back") {
		t.Fatalf("refused %v; message %q", out.ConfigRefused, out.Message())
	}
	if held := read(t, out.ConfigPatch); !strings.Contains(held, "bypassPermissions") || !strings.HasPrefix(out.ConfigPatch, state) {
		t.Fatalf("config patch %s: %q", out.ConfigPatch, held)
	}
	// With the agent allowed to change configuration, it is applied.
	git(t, h.repo, "checkout", "-q", "--", "a.txt")
	out, err = codesnap.ApplyWith(ctx, h.store, h.repo, snap, res, codesnap.ApplyOptions{AllowConfig: true})
	if err != nil || !out.Applied || len(out.ConfigApplied) != 2 {
		t.Fatalf("allowed: %v %+v", err, out)
	}
	if got := read(t, filepath.Join(h.repo, ".brood", "settings.toml")); !strings.Contains(got, "bypassPermissions") {
		t.Fatalf(".brood/settings.toml: %q", got)
	}
}
