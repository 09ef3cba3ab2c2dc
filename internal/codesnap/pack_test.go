package codesnap_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/codesnap"
)

// TestHostilePackIsRefused: a submitter's pack is indexed with git
// index-pack --strict, and its tree must be the one the snapshot names. A
// pack with a tree entry named .git, or without the dirty tree it claims,
// is refused before any copy is made; a snapshot whose Tree differs from
// the pack's tree is refused by the tree check.
func TestHostilePackIsRefused(t *testing.T) { copyModes(t, testHostilePackIsRefused) }

func testHostilePackIsRefused(t *testing.T, overlay bool) {
	ctx := t.Context()
	h := newHosts(t).withOverlay(t, overlay)
	write(t, filepath.Join(h.repo, "a.txt"), "dirty\n")
	good, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	if good.Pack == nil || good.DirtyTree != good.Tree || good.Patch != nil {
		t.Fatalf("a dirty capture: pack %v, dirty tree %s, tree %s, patch %v", good.Pack, good.DirtyTree, good.Tree, good.Patch)
	}
	// A tree with a .git directory in it, packed alone.
	blob := strings.TrimSpace(gitIn(t, h.repo, "[core]\n\thooksPath = /tmp\n", "hash-object", "-w", "--stdin"))
	sub := strings.TrimSpace(gitIn(t, h.repo, "100644 blob "+blob+"\tconfig\n", "mktree"))
	evil := strings.TrimSpace(gitIn(t, h.repo, "040000 tree "+sub+"\t.git\n100644 blob "+blob+"\tx\n", "mktree"))
	packBase := filepath.Join(t.TempDir(), "evil")
	name := strings.TrimSpace(gitIn(t, h.repo, evil+"\n"+sub+"\n"+blob+"\n", "pack-objects", "-q", packBase))
	ref, err := h.store.PutFile(ctx, packBase+"-"+name+".pack")
	if err != nil {
		t.Fatal(err)
	}
	dotgit := *good
	dotgit.Pack, dotgit.DirtyTree, dotgit.Tree = &ref, evil, evil
	missing := *good
	missing.DirtyTree = strings.Repeat("5", len(good.Tree))
	other := *good
	other.Tree = strings.Repeat("6", len(good.Tree))
	for _, tc := range []struct {
		name string
		snap *codesnap.Snapshot
		want string
	}{
		{"a tree entry named .git", &dotgit, "refused"},
		{"a dirty tree the pack lacks", &missing, "lacks its tree"},
		{"another tree than the pack's", &other, "not the submitter's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := &codesnap.Cache{Dir: t.TempDir(), Overlay: h.cache.Overlay, UserXattr: h.cache.UserXattr, Remotes: h.cache.Remotes}
			co, err := cache.Materialise(ctx, h.store, tc.snap, codesnap.Options{ID: "evil"})
			if err == nil {
				co.Cleanup()
				t.Fatal("materialised")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want it to say %q", err, tc.want)
			}
		})
	}
}

// gitIn runs git in dir with stdin.
func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// TestPackHoldsWhatTheBaseLacks: the dirty state's pack holds the blobs of
// the modified and untracked files and the trees above them, and none of
// the base's unchanged files (the base is on every worker already).
func TestPackHoldsWhatTheBaseLacks(t *testing.T) {
	ctx := t.Context()
	h := newHosts(t)
	write(t, filepath.Join(h.repo, "a.txt"), "modified\n")
	write(t, filepath.Join(h.repo, "new", "u.txt"), "untracked\n")
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Pack == nil {
		t.Fatal("no pack for a dirty tree")
	}
	pack := filepath.Join(t.TempDir(), "dirty.pack")
	if err := h.store.GetFile(ctx, *snap.Pack, pack); err != nil {
		t.Fatal(err)
	}
	git(t, h.repo, "index-pack", pack)
	idx, err := os.ReadFile(strings.TrimSuffix(pack, ".pack") + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(gitIn(t, h.repo, string(idx), "show-index")), "\n") {
		got = append(got, strings.Fields(line)[1])
	}
	want := []string{
		git(t, h.repo, "hash-object", "a.txt"),
		git(t, h.repo, "hash-object", "new/u.txt"),
		snap.Tree,
		git(t, h.repo, "rev-parse", snap.Tree+":new"),
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the pack holds %v; want the two dirty blobs and the trees above them, %v", got, want)
	}
}
