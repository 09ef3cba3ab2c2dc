package codesnap_test

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/isolate"
)

// BenchmarkNextDirtyState is a worker's first copy of a submitter's next
// dirty state (issue 26's tree: BROOD_BENCH_FILES (10,000) files, a tenth
// modified and as many untracked added, 4 KiB of random text each; then
// one file edited per submission), the worker holding the previous one:
// "derived" the same worker process (its checkout derived from the
// previous one), "full" a new process on the same cache (no donor: a
// checkout of every file, each hashed on first use). Both index the new
// pack; the capture is not timed.
//
//	go test ./internal/codesnap -run XXX -bench NextDirtyState -benchtime 3x
func BenchmarkNextDirtyState(b *testing.B) {
	if sup := isolate.ProbeIn(b.Context(), b.TempDir()); !sup.Overlay {
		b.Skipf("overlay unavailable here (%s)", sup.Why)
	}
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("BROOD_BENCH_FILES")); err == nil && v > 0 {
		n = v
	}
	raw := make([]byte, 3072)
	rand.Read(raw)
	pad := base64.StdEncoding.EncodeToString(raw)
	for _, mode := range []string{"derived", "full"} {
		b.Run(mode, func(b *testing.B) {
			ctx := b.Context()
			h := benchHosts(b, n)
			for i := range n / 10 {
				os.WriteFile(filepath.Join(h.repo, fmt.Sprint("d", i/100), fmt.Sprint("f", i%100, ".txt")), fmt.Appendf(nil, "modified %d\n%s\n", i, pad), 0o644)
			}
			for i := range n {
				p := filepath.Join(h.repo, "new", fmt.Sprint("u", i/500), fmt.Sprint("n", i, ".txt"))
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, fmt.Appendf(nil, "untracked %d\n%s\n", i, pad), 0o644)
			}
			cache := &codesnap.Cache{Dir: b.TempDir(), Overlay: true, UserXattr: isolate.ProbeIn(ctx, b.TempDir()).UserXattr, Remotes: h.cache.Remotes}
			copyOf := func(c *codesnap.Cache, id string) time.Duration {
				snap, err := codesnap.Capture(ctx, h.store, h.repo)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				co, err := c.Materialise(ctx, h.store, snap, codesnap.Options{ID: id, ReadOnly: true})
				if err != nil {
					b.Fatal(err)
				}
				took := time.Since(start)
				co.Cleanup()
				return took
			}
			copyOf(cache, "first")
			var next time.Duration
			b.ResetTimer()
			for i := range b.N {
				os.WriteFile(filepath.Join(h.repo, "d0", "f0.txt"), fmt.Appendf(nil, "edit %d\n", i), 0o644)
				c := cache
				if mode == "full" {
					c = &codesnap.Cache{Dir: cache.Dir, Overlay: true, UserXattr: cache.UserXattr, Remotes: cache.Remotes}
				}
				next += copyOf(c, fmt.Sprint(i))
			}
			b.ReportMetric(float64(next.Milliseconds())/float64(b.N), "next-copy-ms")
		})
	}
}
