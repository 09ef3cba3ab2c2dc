package isolate

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/trust"
)

// BenchmarkWriterWalks is one side (before or after) of an in-place
// writer's walks of its tree beyond git's: "two" is the configuration
// guard's walk for nested repositories and the link pass of its own (a
// filepath.WalkDir, as before issue 29's cut: walkDirLinks); "one" is
// the guard's walk listing the links itself (trust.NestedWalk with
// Links). A committed tree of 100 files a directory, one link in each.
//
//	go test ./internal/isolate -run '^$' -bench WriterWalks -benchtime 20x
func BenchmarkWriterWalks(b *testing.B) {
	for _, files := range []int{10_000, 40_000} {
		top := b.TempDir()
		for d := range files / 100 {
			dir := filepath.Join(top, fmt.Sprintf("d%03d", d/20), fmt.Sprintf("e%02d", d%20))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			for f := range 100 {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", f)), nil, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			if err := os.Symlink("f000.go", filepath.Join(dir, "link")); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("files=%d/two", files), func(b *testing.B) {
			defer cpuPerOp(b)()
			for b.Loop() {
				if _, err := trust.NestedTops(top); err != nil {
					b.Fatal(err)
				}
				if l := walkDirLinks(top); len(l) != files/100 {
					b.Fatalf("%d links", len(l))
				}
			}
		})
		b.Run(fmt.Sprintf("files=%d/one", files), func(b *testing.B) {
			defer cpuPerOp(b)()
			for b.Loop() {
				n, err := trust.NestedWalk(top, trust.WalkOptions{Links: true, Skip: ".brood"})
				if err != nil || len(n.Links) != files/100 {
					b.Fatalf("%d links, %v", len(n.Links), err)
				}
			}
		})
	}
}

// walkDirLinks is the link pass as it was before it rode on the guard's
// walk: a filepath.WalkDir of its own, readlink on each link.
func walkDirLinks(root string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if f := foldPath(d.Name()); p != root && (f == ".git" || f == ".brood") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&os.ModeSymlink == 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if t, err := os.Readlink(p); err == nil {
			out[filepath.ToSlash(rel)] = t
		}
		return nil
	})
	return out
}

// cpuPerOp reports the process's CPU (user+system) per op, from the call
// to the call of what it returns: on a loaded machine the wall is
// mostly the queue.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() { b.ReportMetric(float64(cpu()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op") }
}
