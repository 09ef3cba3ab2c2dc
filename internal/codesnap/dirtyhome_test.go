package codesnap_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/codesnap"
)

// TestDirtyStateStaysWithItsSnapshot (review 15, C1): two submitters of
// one repository on one worker cache, each with an unpushed commit (a
// bundle) and a dirty state. Each copy's git reaches the fetched history,
// its own base's commits and its own submitter's untracked and modified
// files, never the other's: not by id, not by listing every object its
// repository and alternates hold.
func TestDirtyStateStaysWithItsSnapshot(t *testing.T) {
	copyModes(t, testDirtyStateStaysWithItsSnapshot)
}

func testDirtyStateStaysWithItsSnapshot(t *testing.T, overlay bool) {
	ctx := t.Context()
	h := newHosts(t).withOverlay(t, overlay)
	other := filepath.Join(filepath.Dir(h.repo), "other")
	git(t, filepath.Dir(h.repo), "clone", "-q", h.origin, other)
	type sub struct {
		dir, secret, blob string
		unpushed          string // a blob only an unpushed commit has
		co                *codesnap.Checkout
	}
	subs := []*sub{{dir: h.repo, secret: "A's untracked secret\n"}, {dir: other, secret: "B's uncommitted secret\n"}}
	for i, s := range subs {
		// An unpushed commit (the base comes in a bundle), then the
		// dirty state on it.
		write(t, filepath.Join(s.dir, "committed.txt"), "unpushed "+s.secret)
		git(t, s.dir, "add", "committed.txt")
		git(t, s.dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "unpushed")
		s.unpushed = strings.TrimSpace(git(t, s.dir, "rev-parse", "HEAD:committed.txt"))
		write(t, filepath.Join(s.dir, "secret.txt"), s.secret)
		write(t, filepath.Join(s.dir, "a.txt"), "modified by "+s.secret)
		s.blob = strings.TrimSpace(git(t, s.dir, "hash-object", "secret.txt"))
		snap, err := codesnap.Capture(ctx, h.store, s.dir)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Pack == nil || snap.Bundle == nil {
			t.Fatalf("submitter %d: pack %v, bundle %v; want both", i, snap.Pack, snap.Bundle)
		}
		if s.co, err = h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "job" + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
		defer s.co.Cleanup()
	}
	if repos, _ := filepath.Glob(filepath.Join(h.cache.Dir, "repos", "*.git")); len(repos) != 1 {
		t.Fatalf("cache clones %v; want the two submitters on one", repos)
	}
	for i, s := range subs {
		o := subs[1-i]
		all := inCopy(t, s.co, viewOp{Sh: "git cat-file --batch-all-objects --batch-check='%(objectname)'"}).Out
		if !strings.Contains(all, s.blob) {
			t.Fatalf("copy %d does not reach its own dirty blob %s", i, s.blob)
		}
		if !strings.Contains(all, s.unpushed) {
			t.Fatalf("copy %d does not reach its own base's blob %s", i, s.unpushed)
		}
		if strings.Contains(all, o.blob) {
			t.Errorf("copy %d reads the other submitter's dirty blob %s (%q)", i, o.blob, o.secret)
		}
		if strings.Contains(all, o.unpushed) {
			t.Errorf("copy %d reads the other submitter's unpushed commit's blob %s", i, o.unpushed)
		}
		got := inCopy(t, s.co, viewOp{Sh: "git cat-file -p " + o.blob + " 2>/dev/null || echo unreachable"}).Out
		if got != "unreachable\n" {
			t.Errorf("copy %d: git cat-file -p of the other's blob gives %q", i, got)
		}
	}
	// Nothing of either dirty state is in the clone every copy borrows.
	clone, _ := filepath.Glob(filepath.Join(h.cache.Dir, "repos", "*.git"))
	for _, s := range subs {
		for _, blob := range []string{s.blob, s.unpushed} {
			cmd := "git --git-dir=" + clone[0] + " cat-file -e " + blob + " 2>/dev/null && echo present || echo absent"
			if got := inCopy(t, s.co, viewOp{Sh: cmd}).Out; got != "absent\n" {
				t.Errorf("the submitter's blob %s is in the shared clone", blob)
			}
		}
	}
	if _, err := os.Stat(clone[0]); err != nil {
		t.Fatal(err)
	}
}

// TestLowerMadeWhileTheLockIsHeldShared: an overlay call that finds no
// lower checkout makes it even while another holds the checkout's lock
// shared for its copy's life (here a full copy of the same dirty
// snapshot on the same cache, which holds its dirty home so): it waited
// for that copy's end, for ever where one process holds its copies until
// every call is ready (TestPruneTrees hung so under load).
func TestLowerMadeWhileTheLockIsHeldShared(t *testing.T) {
	ctx := t.Context()
	h := overlayHosts(t)
	write(t, filepath.Join(h.repo, "a.txt"), "dirty\n")
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	full := codesnap.Cache{Dir: h.cache.Dir, Remotes: h.cache.Remotes}
	held, err := full.Materialise(ctx, h.store, snap, codesnap.Options{ID: "full"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Cleanup()
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	co, err := h.cache.Materialise(wait, h.store, snap, codesnap.Options{ID: "overlay"})
	if err != nil {
		t.Fatalf("an overlay copy while a full copy holds the lock: %v", err)
	}
	defer co.Cleanup()
	sameTree(t, withoutIgnored(tree(t, h.repo)), copyTree(t, co))
	// The dirty home goes with the last use of it.
	h.cache.TreeTTL = 1
	homes := func() []string {
		m, _ := filepath.Glob(filepath.Join(h.cache.Dir, "dirty", "*.git"))
		return m
	}
	co.Cleanup()
	if _, err := h.cache.PruneTrees(ctx); err != nil || len(homes()) != 1 {
		t.Fatalf("pruned (%v) the dirty home a full copy holds: %v", err, homes())
	}
	held.Cleanup()
	if _, err := h.cache.PruneTrees(ctx); err != nil || len(homes()) != 0 {
		t.Fatalf("dirty homes after the prune (%v): %v", err, homes())
	}
}
