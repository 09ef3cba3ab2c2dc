package codesnap_test

import (
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/codesnap"
)

// A tree object tampered in the worker's clone (its entries changed, its
// name kept) is refused whether the copy is built afresh by a new worker
// process or derived from a donor: the copy's tree is hashed from its
// entries (no cached tree ids), so it is not the submitter's.
func TestPoisonedTreeObjectIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		newCache bool // a new worker process: a full build and a check by content
	}{
		{"full build in a new worker process", true},
		{"derived from a donor", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDerivation(t, false)
			clone := onlyClone(t, d)
			// The second state's objects loose in the clone, its new/
			// subtree rewritten to list n.txt as keep/k0.txt's blob.
			var ids []string
			for _, l := range strings.Split(gitIn(t, d.h.repo, "", "rev-list", "--objects", d.second.DirtyTree, "--not", d.first.DirtyTree), "\n") {
				if id, _, _ := strings.Cut(l, " "); id != "" {
					ids = append(ids, id)
				}
			}
			gitIn(t, clone, gitIn(t, d.h.repo, strings.Join(ids, "\n")+"\n", "pack-objects", "-q", "--stdout"), "unpack-objects", "-q")
			honest := strings.TrimSpace(gitIn(t, d.h.repo, "", "rev-parse", d.second.DirtyTree+":new"))
			evil := strings.TrimSpace(gitIn(t, d.h.repo, "", "rev-parse", d.second.DirtyTree+":keep/k0.txt"))
			raw, err := hex.DecodeString(evil)
			noErr(t, err)
			body := "100644 n.txt\x00" + string(raw)
			var z bytes.Buffer
			zw := zlib.NewWriter(&z)
			zw.Write([]byte("tree " + strconv.Itoa(len(body)) + "\x00" + body))
			noErr(t, zw.Close())
			obj := filepath.Join(clone, "objects", honest[:2], honest[2:])
			noErr(t, os.Chmod(obj, 0o644))
			noErr(t, os.WriteFile(obj, z.Bytes(), 0o444))

			cache := &d.h.cache
			if tc.newCache {
				cache = &codesnap.Cache{Dir: cache.Dir, Remotes: cache.Remotes, Overlay: cache.Overlay, UserXattr: cache.UserXattr}
			}
			co, err := cache.Materialise(t.Context(), d.h.store, d.second, codesnap.Options{ID: "p"})
			if err == nil {
				defer co.Cleanup()
				b, _ := os.ReadFile(filepath.Join(co.Root, "new", "n.txt"))
				t.Fatalf("a copy on a tampered tree object was made: new/n.txt = %q (the submitter's is \"new\\n\")", b)
			}
		})
	}
}

// Git's own check of a checkout (when the stat check cannot vouch for it)
// reads no configuration a tamperer with the worker's rights can edit:
// core.checkStat=minimal and core.trustctime=false in the clone's config
// do not let a same-size rewrite with its mtime set back pass.
func TestCloneConfigCannotLoosenTheCheck(t *testing.T) {
	d := newDerivation(t, false)
	clone := onlyClone(t, d)
	for _, kv := range [][2]string{{"core.checkStat", "minimal"}, {"core.trustctime", "false"}} {
		if out, err := exec.Command("git", "--git-dir", clone, "config", kv[0], kv[1]).CombinedOutput(); err != nil {
			t.Fatal(string(out))
		}
	}
	// The files' ctimes and the verification a clock second apart, and
	// the tamper another second later: git's check (seconds) could tell
	// them apart only by ctime, which the clone's config turns off.
	nextSecond()
	worker := &codesnap.Cache{Dir: d.h.cache.Dir, Remotes: d.h.cache.Remotes, Overlay: d.h.cache.Overlay, UserXattr: d.h.cache.UserXattr}
	co, err := worker.Materialise(t.Context(), d.h.store, d.first, codesnap.Options{ID: "v", ReadOnly: true})
	noErr(t, err)
	co.Cleanup()
	nextSecond()
	p := filepath.Join(d.firstRoot, "keep", "k3.txt")
	st, err := os.Stat(p)
	noErr(t, err)
	noErr(t, os.WriteFile(p, []byte("KEEP 3\n"), 0o644))
	mt := st.ModTime().Truncate(time.Second)
	noErr(t, os.Chtimes(p, mt, mt))
	co, err = worker.Materialise(t.Context(), d.h.store, d.first, codesnap.Options{ID: "again", ReadOnly: true})
	noErr(t, err) // (rebuilt: the tampered checkout is removed and made again)
	defer co.Cleanup()
	if b, _ := os.ReadFile(filepath.Join(co.Root, "keep", "k3.txt")); string(b) != "keep 3\n" {
		t.Fatalf("the copy's keep/k3.txt = %q, want the submitter's \"keep 3\\n\"", b)
	}
}

// onlyClone is the cache's one clone.
func onlyClone(t *testing.T, d *derivation) string {
	t.Helper()
	clones, _ := filepath.Glob(filepath.Join(d.h.cache.Dir, "repos", "*.git"))
	if len(clones) != 1 {
		t.Fatalf("clones: %v", clones)
	}
	return clones[0]
}

// nextSecond returns once the wall clock's second has changed: file times
// compared by whole seconds then differ (a clock tick, not a wait for
// another goroutine).
func nextSecond() {
	start := time.Now().Unix()
	for time.Now().Unix() == start {
		time.Sleep(time.Until(time.Unix(start+1, 0)))
	}
}

// A name added to a directory of a verified checkout whose stamp a
// passing check kept (statplan.go: its names are not read again while
// its inode, ctime and mtime are those), the directory's mtime set back,
// is seen: the checkout is made again, without it. Fails if the check
// skips a directory on its mtime, or skips directories at all.
func TestNameAddedUnderAKeptStampIsSeen(t *testing.T) {
	d := newDerivation(t, false)
	// The checkout's directories settle (their ctimes over two seconds
	// old: clock ticks), then a use's check keeps their stamps.
	for range 3 {
		nextSecond()
	}
	co, err := d.h.cache.Materialise(t.Context(), d.h.store, d.first, codesnap.Options{ID: "keeps", ReadOnly: true})
	noErr(t, err)
	co.Cleanup()
	if kept, dirs := codesnap.KeptStamps(&d.h.cache, d.first); dirs == 0 || kept != dirs {
		t.Fatalf("%d of %d directory stamps kept before the tamper, want all", kept, dirs)
	}
	dir := filepath.Join(d.firstRoot, "keep")
	st, err := os.Stat(dir)
	noErr(t, err)
	noErr(t, os.WriteFile(filepath.Join(dir, "evil.txt"), []byte("evil\n"), 0o644))
	noErr(t, os.Chtimes(dir, st.ModTime(), st.ModTime()))
	co, err = d.h.cache.Materialise(t.Context(), d.h.store, d.first, codesnap.Options{ID: "after", ReadOnly: true})
	noErr(t, err) // (rebuilt)
	defer co.Cleanup()
	if _, err := os.Lstat(filepath.Join(co.Root, "keep", "evil.txt")); err == nil {
		t.Fatal("the copy holds keep/evil.txt, added to the verified checkout after its check")
	}
}

// A verified checkout's .git/index, which a call using the checkout in
// place reads (git status, diff, grep --cached), rewritten by a tamperer
// is written again from the worker's memory before the next call uses it.
func TestRewrittenCheckoutIndexIsRestored(t *testing.T) {
	d := newDerivation(t, false)
	p := filepath.Join(d.firstRoot, ".git", "index")
	orig, err := os.ReadFile(p)
	noErr(t, err)
	evil := bytes.Clone(orig)
	evil[12+40] ^= 1 // the first entry's blob id
	noErr(t, os.WriteFile(p, evil, 0o644))
	co, err := d.h.cache.Materialise(t.Context(), d.h.store, d.first, codesnap.Options{ID: "after", ReadOnly: true})
	noErr(t, err)
	defer co.Cleanup()
	if got, _ := os.ReadFile(filepath.Join(co.Root, ".git", "index")); !bytes.Equal(got, orig) {
		t.Fatal("the copy's .git/index is not the verified one")
	}
}

// A mount inside a verified checkout (its keep/ moved aside, a tampered
// keep/ made, the original bind-mounted over it) passes every stat check
// while a copy's overlay, the checkout its lower layer, reads what is
// underneath: the checkout is made again, and no mount is left in the
// one used. Run in a user and mount namespace of its own (unshare -rm).
func TestMountInCheckoutIsRebuilt(t *testing.T) {
	if os.Getenv("BROOD_TEST_IN_USERNS") == "" {
		cmd := exec.Command("unshare", "-rm", os.Args[0], "-test.run=^TestMountInCheckoutIsRebuilt$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "BROOD_TEST_IN_USERNS=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestMountInCheckoutIsRebuilt") {
			t.Fatalf("in a namespace of its own: %v\n%s", err, out)
		}
		return
	}
	d := newDerivation(t, false)
	keep := filepath.Join(d.firstRoot, "keep")
	hidden := filepath.Join(t.TempDir(), "keep")
	noErr(t, os.Rename(keep, hidden))
	noErr(t, os.Mkdir(keep, 0o755))
	noErr(t, os.WriteFile(filepath.Join(keep, "k0.txt"), []byte("evil\n"), 0o644))
	noErr(t, unix.Mount(hidden, keep, "", unix.MS_BIND, ""))
	// (The rebuild moves the bad checkout aside, its mount with it.)
	cache, err := filepath.EvalSymlinks(d.h.cache.Dir)
	noErr(t, err)
	t.Cleanup(func() {
		for _, at := range mountsUnder(t, cache) {
			unix.Unmount(at, unix.MNT_DETACH)
		}
	})
	co, err := d.h.cache.Materialise(t.Context(), d.h.store, d.first, codesnap.Options{ID: "after", ReadOnly: true})
	noErr(t, err)
	defer co.Cleanup()
	root, err := filepath.EvalSymlinks(co.Root)
	noErr(t, err)
	if at := mountsUnder(t, root); len(at) > 0 {
		t.Fatalf("the copy's checkout holds a mount: %v", at)
	}
}

// mountsUnder are the mount points at or under dir in this process's
// mount namespace.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	table, err := os.ReadFile("/proc/self/mountinfo")
	noErr(t, err)
	var at []string
	for _, line := range strings.Split(string(table), "\n") {
		if f := strings.Fields(line); len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			at = append(at, f[4])
		}
	}
	return at
}
