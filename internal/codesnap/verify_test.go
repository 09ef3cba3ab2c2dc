package codesnap_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/codesnap"
)

// TestPoisonedBaseCheckoutIsRebuilt: whatever is done to the cache's
// shared checkout of a base commit — a file overwritten (even at the same
// size with its mtime set back), a file added, the checkout's git config
// or HEAD changed — the next copy, in the same worker process or a new
// one, shows the submitter's true tree, never the poisoned one.
func TestPoisonedBaseCheckoutIsRebuilt(t *testing.T) {
	poisons := []struct {
		name   string
		poison func(t *testing.T, tree string)
	}{
		{"overwrite", func(t *testing.T, tree string) {
			write(t, filepath.Join(tree, "sub", "c.go"), "package sub; func init() { evil() }\n")
		}},
		{"same size and mtime", func(t *testing.T, tree string) {
			p := filepath.Join(tree, "b.txt")
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			write(t, p, "EVIL\nEVIL\n")
			if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{"added file", func(t *testing.T, tree string) {
			write(t, filepath.Join(tree, "sub", "zz_evil.go"), "package sub\n")
		}},
		{"git config", func(t *testing.T, tree string) {
			f, err := os.OpenFile(filepath.Join(tree, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("[core]\n\tfsmonitor = touch /tmp/pwned\n")
			f.Close()
		}},
		{"git hook", func(t *testing.T, tree string) {
			write(t, filepath.Join(tree, ".git", "hooks", "post-checkout"), "#!/bin/sh\ntouch /tmp/pwned\n")
		}},
	}
	for _, p := range poisons {
		for _, fresh := range []bool{false, true} {
			name := p.name + "/same process"
			if fresh {
				name = p.name + "/new process"
			}
			t.Run(name, func(t *testing.T) {
				ctx := t.Context()
				h := overlayHosts(t)
				write(t, filepath.Join(h.repo, "a.txt"), "dirty a\n")
				snap, err := codesnap.Capture(ctx, h.store, h.repo)
				if err != nil {
					t.Fatal(err)
				}
				want := withoutIgnored(tree(t, h.repo))
				first, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "first"})
				if err != nil {
					t.Fatal(err)
				}
				sameTree(t, want, copyTree(t, first))
				base := first.Root
				first.Cleanup()
				p.poison(t, base)
				cache := &h.cache
				if fresh {
					cache = &codesnap.Cache{Dir: h.cache.Dir, Remotes: h.cache.Remotes, Overlay: true, UserXattr: h.cache.UserXattr}
				}
				next, err := cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "next"})
				if err != nil {
					t.Fatal(err)
				}
				defer next.Cleanup()
				sameTree(t, want, copyTree(t, next))
				if got := tree(t, next.Root); !mapsEqual(got, withoutIgnored(tree(t, h.repo), "a.txt")) && got["sub/zz_evil.go"] != "" {
					t.Errorf("the poisoned checkout is still there: %v", got)
				}
				if _, err := os.Stat(filepath.Join(next.Root, ".git", "hooks")); err == nil {
					t.Error("the poisoned .git/hooks is still in the checkout")
				}
			})
		}
	}
}

// TestVerifiedCheckoutCost: on a 10k-file base, a copy of a checkout this
// process has verified is checked by stat and reads no file (no git
// command that reads the tree runs), and the first copy in a new process
// checks the cached checkout by content without making it again.
func TestVerifiedCheckoutCost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10k-file tree")
	}
	ctx := t.Context()
	h := overlayHosts(t)
	for d := range 100 {
		for f := range 100 {
			write(t, filepath.Join(h.repo, "big", string(rune('a'+d%26))+itoa(d), itoa(f)+".go"), "package x // "+itoa(d*100+f)+"\n")
		}
	}
	git(t, h.repo, "add", "-A")
	git(t, h.repo, "commit", "-q", "-m", "big")
	git(t, h.repo, "push", "-q", "origin", "main")
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	// Each copy's git processes, from git's own trace (GIT_TRACE2_EVENT
	// passes through gitx's environment): what a copy does, not how long
	// it takes on a loaded machine (its cost is BenchmarkFirstCopy's).
	gits := func(c *codesnap.Cache, id string) map[string]int {
		trace := filepath.Join(t.TempDir(), "trace")
		t.Setenv("GIT_TRACE2_EVENT", trace)
		co, err := c.Materialise(ctx, h.store, snap, codesnap.Options{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		co.Cleanup()
		t.Setenv("GIT_TRACE2_EVENT", "")
		return trace2Commands(t, trace)
	}
	build := gits(&h.cache, "build")
	cached := gits(&h.cache, "cached")
	other := &codesnap.Cache{Dir: h.cache.Dir, Remotes: h.cache.Remotes, Overlay: true, UserXattr: h.cache.UserXattr}
	byContent := gits(other, "content")
	cached2 := gits(other, "cached2")
	t.Logf("10k files, git commands run: first copy %v; next copy %v; first copy in a new process %v; its next %v", build, cached, byContent, cached2)
	// Reading every file is what the first copy (the checkout) and the
	// first use in a new process (the content check) may do; a later
	// copy of the same checkout checks it by stat and runs none of them.
	for _, heavy := range []string{"checkout-index", "update-index", "read-tree", "clone", "fetch"} {
		if cached[heavy]+cached2[heavy] > 0 {
			t.Errorf("a copy of a checkout this process has verified ran git %s (reads every file): %v, %v", heavy, cached, cached2)
		}
	}
	if byContent["update-index"] == 0 {
		t.Errorf("the first copy in a new process did not check the checkout by content (no update-index --refresh): %v", byContent)
	}
	if byContent["clone"]+byContent["fetch"]+byContent["checkout-index"] > 0 {
		t.Errorf("the first copy in a new process made the checkout again instead of checking it: %v", byContent)
	}
}

// trace2Commands counts the git subcommands a GIT_TRACE2_EVENT file
// recorded (its cmd_name events).
func trace2Commands(t *testing.T, trace string) map[string]int {
	t.Helper()
	n := map[string]int{}
	b, err := os.ReadFile(trace)
	if errors.Is(err, os.ErrNotExist) {
		return n
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var ev struct{ Event, Name string }
		if json.Unmarshal(line, &ev) == nil && ev.Event == "cmd_name" {
			n[ev.Name]++
		}
	}
	return n
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// TestConcurrentCallsVerifyOnce: the calls of a run that arrive together
// on a new checkout check it by content once in a worker process (one
// update-index --refresh, which hashes every file); the others wait for
// that check and take its index (a stat check), and all read the tree.
func TestConcurrentCallsVerifyOnce(t *testing.T) {
	h := overlayHosts(t)
	write(t, filepath.Join(h.repo, "a.txt"), "dirty a\n")
	write(t, filepath.Join(h.repo, "u.txt"), "untracked\n")
	snap, err := codesnap.Capture(t.Context(), h.store, h.repo)
	if err != nil {
		t.Fatal(err)
	}
	trace := t.TempDir()
	t.Setenv("GIT_TRACE2_EVENT", trace)
	const calls = 4
	errs := make(chan error, calls)
	for i := range calls {
		go func() {
			co, err := h.cache.Materialise(t.Context(), h.store, snap, codesnap.Options{ID: "r" + itoa(i), ReadOnly: true})
			if err == nil {
				if b, rerr := os.ReadFile(filepath.Join(co.Dir, "u.txt")); rerr != nil || string(b) != "untracked\n" {
					err = fmt.Errorf("call %d reads u.txt %q, %v", i, b, rerr)
				}
				co.Cleanup()
			}
			errs <- err
		}()
	}
	for range calls {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	files, _ := os.ReadDir(trace)
	refreshes := 0
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(trace, f.Name()))
		if bytes.Contains(b, []byte(`"update-index","-q","--refresh"`)) {
			refreshes++
		}
	}
	if refreshes != 1 {
		t.Fatalf("%d calls ran %d checks by content (update-index --refresh); want 1", calls, refreshes)
	}
}
