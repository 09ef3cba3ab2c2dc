package codesnap_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/codesnap"
)

// TestGuardedCheckoutSeesEveryWrite: a verified checkout's later uses
// check a guard (guard.go: inotify watches and read leases), not every
// file, and whatever is done to the checkout — between two calls, or
// while a call holds a copy of it; a file overwritten (its mtime set
// back), through a shared writable mapping, chmod +x, a name added or
// renamed over — trips it, and the next copy shows the submitter's true
// tree, never the poisoned one. A mapping made before the guard is armed
// keeps it from arming (the lease is refused), so the stat check goes on
// deciding.
func TestGuardedCheckoutSeesEveryWrite(t *testing.T) {
	poisons := []struct {
		name   string
		poison func(t *testing.T, tree string)
	}{
		{"overwrite, mtime set back", func(t *testing.T, tree string) {
			p := filepath.Join(tree, "b.txt")
			st, err := os.Stat(p)
			noErr(t, err)
			write(t, p, "EVIL\nEVIL\n")
			noErr(t, os.Chtimes(p, st.ModTime(), st.ModTime()))
		}},
		{"shared writable mapping", func(t *testing.T, tree string) {
			m := mapShared(t, filepath.Join(tree, "sub", "c.go"))
			copy(m, "EVIL")
			noErr(t, unix.Munmap(m))
		}},
		{"chmod +x", func(t *testing.T, tree string) {
			noErr(t, os.Chmod(filepath.Join(tree, "b.txt"), 0o755))
		}},
		{"added file", func(t *testing.T, tree string) {
			write(t, filepath.Join(tree, "sub", "zz_evil.go"), "package sub\n")
		}},
		{"renamed over", func(t *testing.T, tree string) {
			write(t, filepath.Join(tree, "..", "evil"), "EVIL\n")
			noErr(t, os.Rename(filepath.Join(tree, "..", "evil"), filepath.Join(tree, "sub", "c.go")))
		}},
	}
	for _, p := range poisons {
		for _, during := range []bool{false, true} {
			name := p.name + "/between calls"
			if during {
				name = p.name + "/during a call"
			}
			t.Run(name, func(t *testing.T) {
				h, snap, want, base := guardedCheckout(t)
				held, err := h.cache.Materialise(t.Context(), h.store, snap, codesnap.Options{ID: "held"})
				noErr(t, err)
				if !during {
					held.Cleanup()
				}
				p.poison(t, base)
				if codesnap.Guarded(&h.cache, snap) {
					t.Fatal("the guard is quiet after the checkout was poisoned")
				}
				if during {
					held.Cleanup()
				}
				next, err := h.cache.Materialise(t.Context(), h.store, snap, codesnap.Options{ID: "next"})
				noErr(t, err)
				defer next.Cleanup()
				sameTree(t, want, copyTree(t, next))
				again, err := h.cache.Materialise(t.Context(), h.store, snap, codesnap.Options{ID: "again"})
				noErr(t, err)
				again.Cleanup()
				if !codesnap.Guarded(&h.cache, snap) {
					t.Error("the rebuilt checkout is not guarded after its next use")
				}
			})
		}
	}
	t.Run("mapping made before arming", func(t *testing.T) {
		ctx := t.Context()
		h := overlayHosts(t)
		snap, err := codesnap.Capture(ctx, h.store, h.repo)
		noErr(t, err)
		want := withoutIgnored(tree(t, h.repo))
		first, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "first"})
		noErr(t, err)
		base := first.Root
		first.Cleanup()
		m := mapShared(t, filepath.Join(base, "sub", "c.go"))
		defer unix.Munmap(m)
		co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "second"})
		noErr(t, err)
		co.Cleanup()
		if codesnap.Guarded(&h.cache, snap) {
			t.Fatal("a guard was armed while a writable mapping of a file exists")
		}
		copy(m, "EVIL")
		next, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "next"})
		noErr(t, err)
		defer next.Cleanup()
		sameTree(t, want, copyTree(t, next))
	})
}

// guardedCheckout is a verified, guarded checkout of a snapshot of a
// clean repository: its hosts, snapshot, tree and checkout's directory.
func guardedCheckout(t *testing.T) (*hosts, *codesnap.Snapshot, map[string]string, string) {
	ctx := t.Context()
	h := overlayHosts(t)
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	noErr(t, err)
	want := withoutIgnored(tree(t, h.repo))
	first, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "first"})
	noErr(t, err)
	sameTree(t, want, copyTree(t, first))
	base := first.Root
	first.Cleanup()
	// The first use hashed every file; the second's stat check arms it.
	second, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "second"})
	noErr(t, err)
	second.Cleanup()
	if !codesnap.Guarded(&h.cache, snap) {
		t.Fatal("the verified checkout is not guarded after a passing check")
	}
	return h, snap, want, base
}

// mapShared is a shared writable mapping of the file at path, its
// descriptor closed (the mapping holds the file open for writing).
func mapShared(t *testing.T, path string) []byte {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	noErr(t, err)
	defer unix.Close(fd)
	m, err := unix.Mmap(fd, 0, 4, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	noErr(t, err)
	return m
}
