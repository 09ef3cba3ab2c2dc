package trust

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNestedWalkLinks: with links, the walk lists every symbolic link
// with its target, in git directories too (the top's own, a nested
// repository's, one that is no repository's: review24 P1-1, review22
// P3-1) but in their object fan-out and packs, and below Skip (a link at
// Skip itself is listed); a nested project's .brood is walked for links. What NestedTops finds is
// the same with links listed or not, and a links-only walk lists the
// same links.
func TestNestedWalkLinks(t *testing.T) {
	top := t.TempDir()
	for _, f := range []string{".git/HEAD", ".git/objects/x", ".git/refs/heads/main", "nested/.git/HEAD", "nested/.git/objects/x",
		"nested/.git/refs/x", "fake/.git/config", ".brood/dispatch/t/result.json", "sub/.brood/dispatch/t/result.json", "src/a.go"} {
		write(t, filepath.Join(top, f), "x\n")
	}
	links := map[string]string{
		"top": "/etc/passwd", "src/in": "a.go", "src/up": "../../x", "fake/.git/evil": "/etc/passwd",
		"sub/.brood/dispatch/evil": "/etc", "nested/evil": "/", "src/dir": "/no/such",
		".git/evil": "/etc", ".git/logs/HEAD": "/etc/passwd", "nested/.git/hooks": "/tmp", "nested/.git/COMMIT_EDITMSG": "/etc/passwd",
		".git/objects/info/alternates": "/etc", "src/objects/ab/x": "/etc", "src/objects/pack": "/etc", "nested/.git/objects/pack": "/etc",
	}
	skipped := map[string]string{".brood/dispatch/t/evil": "/etc", ".git/objects/ab/evil": "/etc", ".git/objects/pack/evil": "/etc",
		"nested/.git/objects/0f/evil": "/etc", "fake/.git/objects/pack/evil": "/etc"}
	for p, tgt := range maps.All(links) {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(top, p)), 0o755))
		must(t, os.Symlink(tgt, filepath.Join(top, p)))
	}
	for p, tgt := range skipped {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(top, p)), 0o755))
		must(t, os.Symlink(tgt, filepath.Join(top, p)))
	}
	plain, err := NestedTops(top)
	must(t, err)
	for _, o := range []WalkOptions{{Links: true, Skip: ".brood"}, {Only: true, Skip: ".brood"}} {
		got, err := NestedWalk(top, o)
		must(t, err)
		if !maps.Equal(got.Links, links) {
			t.Errorf("%+v: Links = %v, want %v", o, got.Links, links)
		}
		if len(got.Unseen) > 0 {
			t.Errorf("%+v: Unseen = %v", o, got.Unseen)
		}
		if o.Only {
			continue
		}
		if !slices.Equal(got.Git, plain.Git) || !slices.Equal(got.Config, plain.Config) || !slices.Equal(got.GitDirs, plain.GitDirs) {
			t.Errorf("with links: Git %v Config %v GitDirs %v, without: %v %v %v", got.Git, got.Config, got.GitDirs, plain.Git, plain.Config, plain.GitDirs)
		}
	}
}

// TestNestedWalkLinksUnseen: a directory past PATH_MAX fails the
// guard's walk (its callers report it as not checked), while a
// links-only walk names it as unseen and lists the links around it.
func TestNestedWalkLinksUnseen(t *testing.T) {
	top := t.TempDir()
	must(t, os.Symlink("/etc/passwd", filepath.Join(top, "Makefile")))
	deep := exec.Command("sh", "-c", "d=$(printf 'a%.0s' $(seq 1 200)); mkdir deep && cd deep && for i in $(seq 1 20); do mkdir $d && cd $d || exit 1; done; mkdir -p $d/$d")
	deep.Dir = top
	if out, err := deep.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := NestedWalk(top, WalkOptions{Links: true}); err == nil {
		t.Error("the guard's walk past PATH_MAX: no error")
	}
	got, err := NestedWalk(top, WalkOptions{Only: true})
	must(t, err)
	if got.Links["Makefile"] != "/etc/passwd" || len(got.Unseen) != 1 || !strings.HasPrefix(got.Unseen[0].Dir, "deep/a") ||
		strings.Count(got.Unseen[0].Dir, "/") != 21 {
		t.Errorf("links-only walk: Links %v, Unseen %v", got.Links, got.Unseen)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
