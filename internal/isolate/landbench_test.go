//go:build linux

package isolate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLandingTwoFiles times a worktree copy's landing (Finish) of a
// writer that changed two files of a 2,000-file tree: the git processes
// the patch and its landing cost, nothing of the child's.
func BenchmarkLandingTwoFiles(b *testing.B) {
	dir := b.TempDir()
	for i := range 2000 {
		p := filepath.Join(dir, fmt.Sprintf("d%02d/f%03d.txt", i/100, i%100))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, fmt.Appendf(nil, "file %d\n", i), 0o644)
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".brood/\n"), 0o644)
	git(b, dir, "init", "-q", "-b", "main")
	git(b, dir, "add", "-A")
	git(b, dir, "commit", "-qm", "bench")
	ctx := context.Background()
	iso := New(ctx)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		state := filepath.Join(dir, ".brood", "dispatch", fmt.Sprintf("B%d", i))
		os.MkdirAll(state, 0o755)
		ws, err := iso.Prepare(ctx, Options{Dir: dir, ID: fmt.Sprintf("B%d", i), StateDir: state, ForceWorktree: true})
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range []string{"d01/f001.txt", "d07/f042.txt"} {
			os.WriteFile(filepath.Join(ws.Root, f), fmt.Appendf(nil, "edit %d\n", i), 0o644)
		}
		b.StartTimer()
		out, err := ws.Finish(ctx)
		b.StopTimer()
		if err != nil || !out.Applied {
			b.Fatalf("landing: %v %+v", err, out)
		}
		ws.Cleanup(ctx)
		git(b, dir, "checkout", "-q", "--", ".")
		b.StartTimer()
	}
}
