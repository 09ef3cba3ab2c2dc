package codesnap_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/isolate"
)

// benchHosts is a pushed repository of n more files, one untracked.
func benchHosts(b *testing.B, n int) *hosts {
	h := newHosts(b)
	for i := range n {
		p := filepath.Join(h.repo, fmt.Sprint("d", i/100), fmt.Sprint("f", i%100, ".txt"))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, fmt.Appendf(nil, "file %d\n", i), 0o644)
	}
	git(b, h.repo, "add", "-A")
	git(b, h.repo, "commit", "-q", "-m", "many files")
	git(b, h.repo, "push", "-q", "origin", "main")
	os.WriteFile(filepath.Join(h.repo, "untracked.txt"), []byte("dirty\n"), 0o644)
	return h
}

// BenchmarkMaterialise is one call's copy of a pushed repository with one
// untracked file: "full" a checkout per call (the fallback), "overlay" an
// overlay over the cache's checkout of the snapshot (made once, before the
// timer starts: what every call after a worker's first on that snapshot
// costs), and a read-only call's (that checkout in place, verified). Where
// the machine has no overlay, only "full" runs.
//
//	go test ./internal/codesnap -run XXX -bench Materialise -benchtime 20x
func BenchmarkMaterialise(b *testing.B) {
	modes := []string{"full"}
	if sup := isolate.ProbeIn(b.Context(), b.TempDir()); sup.Overlay {
		modes = append(modes, "overlay", "readonly")
	} else {
		b.Logf("overlay unavailable here (%s)", sup.Why)
	}
	for _, n := range []int{1000, 10000} {
		for _, mode := range modes {
			b.Run(fmt.Sprint(n, "files/", mode), func(b *testing.B) {
				h := benchHosts(b, n)
				if mode != "full" {
					h.cache.Overlay = true
					h.cache.UserXattr = isolate.ProbeIn(b.Context(), b.TempDir()).UserXattr
				}
				ctx := b.Context()
				snap, err := codesnap.Capture(ctx, h.store, h.repo)
				if err != nil {
					b.Fatal(err)
				}
				// The clone (and the base checkout) once, as a worker's
				// first call on this base makes them.
				co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "warm"})
				if err != nil {
					b.Fatal(err)
				}
				co.Cleanup()
				b.ResetTimer()
				for i := range b.N {
					co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: fmt.Sprint(i), ReadOnly: mode == "readonly"})
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					co.Cleanup()
					b.StartTimer()
				}
			})
		}
	}
}

func BenchmarkCapture(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n, "files"), func(b *testing.B) {
			h := benchHosts(b, n)
			ctx := b.Context()
			for b.Loop() {
				if _, err := codesnap.Capture(ctx, h.store, h.repo); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkResultAndApply(b *testing.B) {
	h := benchHosts(b, 10000)
	ctx := b.Context()
	snap, err := codesnap.Capture(ctx, h.store, h.repo)
	if err != nil {
		b.Fatal(err)
	}
	co, err := h.cache.Materialise(ctx, h.store, snap, codesnap.Options{ID: "r"})
	if err != nil {
		b.Fatal(err)
	}
	defer co.Cleanup()
	for i := range b.N {
		os.WriteFile(filepath.Join(co.Root, "d0", "f0.txt"), fmt.Appendf(nil, "change %d\n", i), 0o644)
		res, err := co.Result(ctx, h.store)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := codesnap.Apply(ctx, h.store, h.repo, "", snap, res); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		git(b, h.repo, "checkout", "-q", "--", ".")
		b.StartTimer()
	}
}
