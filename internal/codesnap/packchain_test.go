package codesnap_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/taskdir"
)

// dirtyFiles writes n untracked files of random text under new/, ten to a
// directory, and modifies a.txt.
func dirtyFiles(t *testing.T, h *hosts, n int) {
	t.Helper()
	for i := range n {
		raw := make([]byte, 1024)
		rand.Read(raw)
		write(t, filepath.Join(h.repo, "new", fmt.Sprint("d", i/10), fmt.Sprint("f", i, ".txt")), hex.EncodeToString(raw)+"\n")
	}
	write(t, filepath.Join(h.repo, "a.txt"), "modified\n"+rand.Text()+"\n")
}

func capture(t *testing.T, h *hosts) *codesnap.Snapshot {
	t.Helper()
	snap, err := codesnap.Capture(t.Context(), h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Pack == nil || snap.DirtyTree != snap.Tree {
		t.Fatalf("a dirty capture: pack %v, dirty tree %s, tree %s", snap.Pack, snap.DirtyTree, snap.Tree)
	}
	return snap
}

// packed lists the objects of a pack in the store.
func packed(t *testing.T, h *hosts, ref *blobstore.Ref) []string {
	t.Helper()
	pack := filepath.Join(t.TempDir(), "p.pack")
	if err := h.store.GetFile(t.Context(), *ref, pack); err != nil {
		t.Fatal(err)
	}
	git(t, h.repo, "index-pack", pack)
	idx := read(t, strings.TrimSuffix(pack, ".pack")+".idx")
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(gitIn(t, h.repo, idx, "show-index")), "\n") {
		out = append(out, strings.Fields(line)[1])
	}
	return out
}

// freshCache is another worker's cache: it has seen none of h's packs.
func freshCache(t *testing.T, h *hosts) *codesnap.Cache {
	return &codesnap.Cache{Dir: t.TempDir(), Overlay: h.cache.Overlay, UserXattr: h.cache.UserXattr, Remotes: h.cache.Remotes}
}

// TestPackChain: a second capture after one file is edited ships a pack of
// the edited blob and the trees above it, naming the first pack as its
// chain; a worker that never saw the first pack materialises the exact tree
// through the chain, one that did indexes the new pack alone (it works with
// the first pack gone from the store), and a worker that needs a link the
// store lost is told which. The next capture, its chain broken, ships a
// full pack.
func TestPackChain(t *testing.T) { copyModes(t, testPackChain) }

func testPackChain(t *testing.T, overlay bool) {
	ctx := t.Context()
	h := newHosts(t).withOverlay(t, overlay)
	dirtyFiles(t, h, 40)
	first := capture(t, h)
	if len(first.PackChain) != 0 {
		t.Fatalf("the first capture has a chain: %+v", first.PackChain)
	}
	materialise := func(c *codesnap.Cache, snap *codesnap.Snapshot, id string) {
		t.Helper()
		co, err := c.Materialise(ctx, h.store, snap, codesnap.Options{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		defer co.Cleanup()
		sameTree(t, tree(t, h.repo), copyTree(t, co))
	}
	materialise(&h.cache, first, "first")

	write(t, filepath.Join(h.repo, "new", "d1", "f12.txt"), "edited\n")
	second := capture(t, h)
	if len(second.PackChain) != 1 || *second.PackChain[0].Pack != *first.Pack || second.PackChain[0].Tree != first.DirtyTree {
		t.Fatalf("the second capture's chain %+v; want the first pack %v with its tree %s", second.PackChain, first.Pack, first.DirtyTree)
	}
	if got := packed(t, h, second.Pack); len(got) != 4 {
		t.Fatalf("the second pack holds %d objects; want 4 (the edited blob, new/d1, new, the root)", len(got))
	}
	materialise(freshCache(t, h), second, "fresh")

	if err := h.store.Delete(ctx, first.Pack.Key); err != nil {
		t.Fatal(err)
	}
	materialise(&h.cache, second, "second")
	_, err := freshCache(t, h).Materialise(ctx, h.store, second, codesnap.Options{ID: "lost"})
	if err == nil || !strings.Contains(err.Error(), "link 0 of the dirty state's pack chain ("+first.Pack.Key) || !strings.Contains(err.Error(), "not in the store") {
		t.Fatalf("a chain whose link the store lost: %v", err)
	}

	write(t, filepath.Join(h.repo, "new", "d1", "f12.txt"), "edited again\n")
	third := capture(t, h)
	if len(third.PackChain) != 0 || len(packed(t, h, third.Pack)) < 40 {
		t.Fatalf("a capture whose chain lost a pack: chain %+v; want a full pack", third.PackChain)
	}
	materialise(freshCache(t, h), third, "third")
}

// TestPackChainRestarts: what a second capture ships, by what happened
// since the first: a chain only where the record, the repository and the
// store still hold the first and the change is small; a full pack
// otherwise, never a failure.
func TestPackChainRestarts(t *testing.T) {
	for _, tc := range restartCases() {
		t.Run(tc.name, func(t *testing.T) {
			h := newHosts(t)
			dirtyFiles(t, h, 40)
			first := capture(t, h)
			if s := tc.since(t, h, first); s != nil {
				h.store = s
			}
			second := capture(t, h)
			if chained := len(second.PackChain) == 1 && *second.PackChain[0].Pack == *first.Pack && second.PackChain[0].Tree == first.DirtyTree; chained != tc.chain || len(second.PackChain) > 1 {
				t.Fatalf("the second capture's chain %+v; want the first pack: %v", second.PackChain, tc.chain)
			}
			if same := *second.Pack == *first.Pack; same != tc.same {
				t.Fatalf("the second capture's pack is the first's: %v, want %v", same, tc.same)
			}
			if !tc.chain && !tc.same && len(packed(t, h, second.Pack)) < 40 {
				t.Fatal("the second capture's pack is not a full one")
			}
			co, err := freshCache(t, h).Materialise(t.Context(), h.store, second, codesnap.Options{ID: "second"})
			if err != nil {
				t.Fatal(err)
			}
			defer co.Cleanup()
			sameTree(t, tree(t, h.repo), copyTree(t, co))
		})
	}
}

type restartCase struct {
	name string
	// since is what happens between the two captures (a store: the
	// second capture's, if not nil).
	since func(t *testing.T, h *hosts, first *codesnap.Snapshot) *blobstore.Store
	chain bool // the second capture continues the first's chain
	same  bool // and ships the first's pack again
}

// chainDir is where the submitter keeps the chain records of h's
// repository: dirty-packs/ in the user's state directory of the checkout.
func chainDir(t *testing.T, h *hosts) string {
	t.Helper()
	common, err := filepath.EvalSymlinks(filepath.Join(h.repo, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(taskdir.CheckoutState(common), "dirty-packs")
}

// onlyRecord is the repository's one chain record file.
func onlyRecord(t *testing.T, h *hosts) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(chainDir(t, h), "*.json"))
	if len(files) != 1 {
		t.Fatalf("chain records %v; want one", files)
	}
	return files
}

func restartCases() []restartCase {
	edit := func(t *testing.T, h *hosts) { write(t, filepath.Join(h.repo, "new", "d0", "f3.txt"), "edited\n") }
	editRecord := func(t *testing.T, h *hosts, f func(map[string]any)) {
		files, _ := filepath.Glob(filepath.Join(chainDir(t, h), "*.json"))
		if len(files) != 1 {
			t.Fatalf("chain records %v; want one", files)
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(read(t, files[0])), &rec); err != nil {
			t.Fatal(err)
		}
		f(rec)
		data, _ := json.Marshal(rec)
		write(t, files[0], string(data))
	}
	return []restartCase{
		{"one file edited", func(t *testing.T, h *hosts, _ *codesnap.Snapshot) *blobstore.Store { edit(t, h); return nil }, true, false},
		{"nothing changed", func(t *testing.T, h *hosts, _ *codesnap.Snapshot) *blobstore.Store { return nil }, false, true},
		{"a new base", func(t *testing.T, h *hosts, _ *codesnap.Snapshot) *blobstore.Store {
			write(t, filepath.Join(h.repo, "b.txt"), "committed\n")
			git(t, h.repo, "commit", "-q", "-m", "third", "b.txt")
			return nil
		}, false, false},
		{"the dirty state rewritten", func(t *testing.T, h *hosts, _ *codesnap.Snapshot) *blobstore.Store { dirtyFiles(t, h, 40); return nil }, false, false},
		{"another store", func(t *testing.T, h *hosts, _ *codesnap.Snapshot) *blobstore.Store {
			edit(t, h)
			s, err := blobstore.Open(t.Context(), "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, false, false},
		{"the first pack gone from the store", func(t *testing.T, h *hosts, first *codesnap.Snapshot) *blobstore.Store {
			edit(t, h)
			if err := h.store.Delete(t.Context(), first.Pack.Key); err != nil {
				t.Fatal(err)
			}
			return nil
		}, false, false},
		{"an unreadable record", func(t *testing.T, h *hosts, _ *codesnap.Snapshot) *blobstore.Store {
			edit(t, h)
			files, _ := filepath.Glob(filepath.Join(chainDir(t, h), "*.json"))
			for _, f := range files {
				write(t, f, "{not json")
			}
			return nil
		}, false, false},
		{"a FIFO in the record's place", func(t *testing.T, h *hosts, _ *codesnap.Snapshot) *blobstore.Store {
			edit(t, h)
			for _, f := range onlyRecord(t, h) {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Mkfifo(f, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			return nil
		}, false, false},
		{"a link to /dev/zero in the record's place", func(t *testing.T, h *hosts, _ *codesnap.Snapshot) *blobstore.Store {
			edit(t, h)
			for _, f := range onlyRecord(t, h) {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("/dev/zero", f); err != nil {
					t.Fatal(err)
				}
			}
			return nil
		}, false, false},
		{"the checkout's state directory a link out of brood's", func(t *testing.T, h *hosts, _ *codesnap.Snapshot) *blobstore.Store {
			edit(t, h)
			onlyRecord(t, h)
			dir := filepath.Dir(chainDir(t, h))
			out := filepath.Join(t.TempDir(), "checkout")
			if err := os.Rename(dir, out); err != nil { // (the record, valid, now outside)
				t.Fatal(err)
			}
			if err := os.Symlink(out, dir); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { // (before out is removed)
				if files, _ := os.ReadDir(filepath.Join(out, "dirty-packs")); len(files) != 1 {
					t.Errorf("the second capture wrote through the link out of brood's state directory: %v", files)
				}
			})
			return nil
		}, false, false},
		{"a record in the git dir, where brood kept it before", func(t *testing.T, h *hosts, _ *codesnap.Snapshot) *blobstore.Store {
			edit(t, h)
			f := onlyRecord(t, h)[0]
			old := filepath.Join(h.repo, ".git", "brood", "dirty-packs", filepath.Base(f))
			if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(f, old); err != nil { // (valid: an in-place writer could write it)
				t.Fatal(err)
			}
			return nil
		}, false, false},
		{"the first tree gone from the repository", func(t *testing.T, h *hosts, _ *codesnap.Snapshot) *blobstore.Store {
			edit(t, h)
			editRecord(t, h, func(rec map[string]any) { rec["links"].([]any)[0].(map[string]any)["tree"] = strings.Repeat("5", 40) })
			return nil
		}, false, false},
		{"a chain started over a day ago", func(t *testing.T, h *hosts, _ *codesnap.Snapshot) *blobstore.Store {
			edit(t, h)
			editRecord(t, h, func(rec map[string]any) { rec["since"] = "2020-01-01T00:00:00Z" })
			return nil
		}, false, false},
	}
}

// TestPackChainBound: a chain grows by one link per capture up to seven
// (a snapshot names eight packs at most); the next capture starts a new
// full pack, and the chain grows from it again.
func TestPackChainBound(t *testing.T) {
	h := newHosts(t)
	dirtyFiles(t, h, 100)
	var last *codesnap.Snapshot
	for i, want := range []int{0, 1, 2, 3, 4, 5, 6, 7, 0, 1} {
		write(t, filepath.Join(h.repo, "new", "d2", "f20.txt"), fmt.Sprint("edit ", i, "\n"))
		last = capture(t, h)
		if len(last.PackChain) != want {
			t.Fatalf("capture %d has a chain of %d links; want %d", i, len(last.PackChain), want)
		}
	}
	co, err := freshCache(t, h).Materialise(t.Context(), h.store, last, codesnap.Options{ID: "last"})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Cleanup()
	sameTree(t, tree(t, h.repo), copyTree(t, co))
}

// TestForgedPackChainIsRefused: a worker takes nothing of a chain on the
// submitter's word: a link must be in the store, index (index-pack
// --strict: every object it names is in it or indexed before) and give
// the tree it is named with; a chain without a pack, of a malformed link
// or over the bound is refused before any git runs.
func TestForgedPackChainIsRefused(t *testing.T) {
	ctx := t.Context()
	h := newHosts(t)
	dirtyFiles(t, h, 20)
	capture(t, h)
	write(t, filepath.Join(h.repo, "new", "d0", "f1.txt"), "edited\n")
	good := capture(t, h)
	if len(good.PackChain) != 1 {
		t.Fatalf("the second capture's chain %+v; want one link", good.PackChain)
	}
	forge := func(f func(s *codesnap.Snapshot)) *codesnap.Snapshot {
		s := *good
		s.PackChain = append([]codesnap.PackLink(nil), good.PackChain...)
		f(&s)
		return &s
	}
	zero := &blobstore.Ref{Key: "sha256/00/" + strings.Repeat("0", 64), Size: 10, SHA256: strings.Repeat("0", 64)}
	for _, tc := range []struct {
		name string
		snap *codesnap.Snapshot
		want string
	}{
		{"a link that lacks its tree", forge(func(s *codesnap.Snapshot) { s.PackChain[0].Tree = strings.Repeat("5", 40) }), "lacks its tree"},
		{"the new pack as its own link", forge(func(s *codesnap.Snapshot) { s.PackChain[0].Pack = s.Pack }), "is refused"},
		{"a link the store lacks", forge(func(s *codesnap.Snapshot) { s.PackChain[0].Pack = zero }), "not in the store"},
		{"no link", forge(func(s *codesnap.Snapshot) { s.PackChain = nil }), "is refused"},
		{"a chain without a pack", forge(func(s *codesnap.Snapshot) { s.Pack, s.DirtyTree = nil, "" }), "pack_chain of 1 link(s) but no pack"},
		{"a link without a pack", forge(func(s *codesnap.Snapshot) { s.PackChain[0].Pack = nil }), "link 0 names no pack"},
		{"a link's tree an option", forge(func(s *codesnap.Snapshot) { s.PackChain[0].Tree = "--output=/tmp/x" }), "pack_chain link 0 tree"},
		{"a link's ref malformed", forge(func(s *codesnap.Snapshot) { s.PackChain[0].Pack = &blobstore.Ref{Key: "../x", SHA256: "ab"} }), "pack_chain link 0"},
		{"eight links", forge(func(s *codesnap.Snapshot) {
			for len(s.PackChain) < 8 {
				s.PackChain = append(s.PackChain, good.PackChain[0])
			}
		}), "8 links, over 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			co, err := freshCache(t, h).Materialise(ctx, h.store, tc.snap, codesnap.Options{ID: "forged"})
			if err == nil {
				co.Cleanup()
				t.Fatal("materialised")
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want it to say %q", err, tc.want)
			}
		})
	}
}
