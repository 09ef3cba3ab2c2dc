package codesnap_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

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

// TestVerifiedCheckoutCost measures a copy's cost on a 10k-file base once
// its checkout is cached and verified (the stat comparison), against the
// first verification by content in a new process, and holds both well
// below the cost of making the checkout.
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
	timed := func(c *codesnap.Cache, id string) time.Duration {
		start := time.Now()
		co, err := c.Materialise(ctx, h.store, snap, codesnap.Options{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		d := time.Since(start)
		co.Cleanup()
		return d
	}
	build := timed(&h.cache, "build")
	cached := timed(&h.cache, "cached")
	other := &codesnap.Cache{Dir: h.cache.Dir, Remotes: h.cache.Remotes, Overlay: true, UserXattr: h.cache.UserXattr}
	byContent := timed(other, "content")
	cached2 := timed(other, "cached2")
	t.Logf("10k files: first copy (clone, checkout, verify) %v; next copy (stat check) %v; first copy in a new process (content check) %v; its next %v", build, cached, byContent, cached2)
	// The verification must stay a small part of a copy: far below making
	// the checkout, and the stat check below the content check's first use.
	if cached*3 > build || cached2*3 > build || byContent > build {
		t.Errorf("verifying a cached checkout costs too much: %v and %v per copy (stat), %v (content), against %v to make it", cached, cached2, byContent, build)
	}
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
