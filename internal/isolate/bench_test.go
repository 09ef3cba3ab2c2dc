//go:build linux

package isolate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/sandbox"
)

// benchFiles is the size of the generated repository.
const benchFiles = 40000

// benchHelperEnv makes the test binary a mount helper: it sits in its own
// user+mount namespace and mounts/unmounts on request, so the benchmark can
// time the mount without counting a process spawn (which the child pays
// anyway, isolated or not).
const benchHelperEnv = "ISOLATE_BENCH_HELPER"

type benchReq struct {
	Op    string    `json:"op"` // "mount" (then edit Files) or "umount"
	Spec  mountSpec `json:"spec"`
	Files []string  `json:"files"`
	Iter  int       `json:"iter"`
}

type benchResp struct {
	NS  int64  `json:"ns"`
	Err string `json:"err,omitempty"`
}

func benchHelper() int {
	sc := bufio.NewScanner(os.Stdin)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		var req benchReq
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return 1
		}
		var resp benchResp
		switch req.Op {
		case "mount":
			t0 := time.Now()
			err := mountOverlay(req.Spec)
			resp.NS = time.Since(t0).Nanoseconds()
			if err == nil {
				err = editFiles(req.Files, req.Iter) // the child's work: not timed
			}
			if err != nil {
				resp.Err = err.Error()
			}
		case "umount":
			os.Chdir("/")
			t0 := time.Now()
			if err := unix.Unmount(req.Spec.Root, 0); err != nil {
				resp.Err = err.Error()
			}
			resp.NS = time.Since(t0).Nanoseconds()
		}
		if err := enc.Encode(resp); err != nil {
			return 1
		}
	}
	return 0
}

func editFiles(files []string, iter int) error {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(f, append(b, fmt.Sprintf("edit %d\n", iter)...), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// benchRepo returns a committed repository of benchFiles small files,
// generated once and cached in the temp directory across runs, and the 20
// files the "child" edits. Each run starts by resetting those files.
func benchRepo(b *testing.B) (string, []string) {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("brood-bench-repo-%d", benchFiles))
	var edits []string
	for i := range 20 {
		edits = append(edits, filepath.Join(dir, fmt.Sprintf("pkg%02d/sub%03d/f%02d.txt", (i*9)%20, i*9, i)))
	}
	if _, err := os.Stat(filepath.Join(dir, ".ready")); err != nil {
		os.RemoveAll(dir)
		for i := range benchFiles {
			d := i / 100
			p := filepath.Join(dir, fmt.Sprintf("pkg%02d/sub%03d/f%02d.txt", d%20, d, i%100))
			if i%100 == 0 {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					b.Fatal(err)
				}
			}
			if err := os.WriteFile(p, fmt.Appendf(nil, "file %d\nline 2\nline 3\n", i), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".ready\n"), 0o644)
		git(b, dir, "init", "-q")
		git(b, dir, "add", "-A")
		git(b, dir, "commit", "-qm", "bench")
		os.WriteFile(filepath.Join(dir, ".ready"), nil, 0o644)
	}
	os.RemoveAll(filepath.Join(dir, ".git", "brood-worktrees"))
	os.RemoveAll(filepath.Join(dir, ".git", "plain-wt"))
	git(b, dir, "checkout", "-q", "--", ".")
	git(b, dir, "worktree", "prune")
	return dir, edits
}

func resetEdits(b *testing.B, dir string) {
	b.Helper()
	git(b, dir, "checkout", "-q", "--", ".")
}

// BenchmarkIsolation measures a whole isolation cycle (create, the child's
// 20 edits, change set, apply-back, teardown) on a 40,000-file repository
// for the overlay, the worktree fallback and plain `git worktree add`.
// Custom metrics split the overlay cycle: create-ms is the critical path at
// spawn (Prepare plus the mount syscall in a helper already in its
// namespace); snapshot-ms runs in the background, overlapping the child's
// start-up; finish-ms is change set plus apply-back; teardown-ms is Cleanup
// plus unmount.
func BenchmarkIsolation(b *testing.B) {
	dir, edits := benchRepo(b)
	ctx := context.Background()
	iso := New(ctx)
	b.Run("overlay", func(b *testing.B) {
		if !iso.Support().Overlay {
			b.Skip("no overlay in a user namespace here: " + iso.Support().Why)
		}
		helper := exec.Command(os.Args[0], "-test.run=^$")
		helper.Env = append(os.Environ(), benchHelperEnv+"=1")
		sandbox.AddNamespaces(helper, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS, mountCaps())
		in, _ := helper.StdinPipe()
		outPipe, _ := helper.StdoutPipe()
		helper.Stderr = os.Stderr
		if err := helper.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { in.Close(); helper.Wait() }()
		dec := json.NewDecoder(outPipe)
		call := func(req benchReq) time.Duration {
			if err := json.NewEncoder(in).Encode(req); err != nil {
				b.Fatal(err)
			}
			var resp benchResp
			if err := dec.Decode(&resp); err != nil {
				b.Fatal(err)
			}
			if resp.Err != "" {
				b.Fatal(resp.Err)
			}
			return time.Duration(resp.NS)
		}
		var create, snap, finish, teardown, umount time.Duration
		state := b.TempDir()
		b.ResetTimer()
		for i := range b.N {
			t0 := time.Now()
			ws, err := iso.Prepare(ctx, Options{Dir: dir, ID: fmt.Sprint("b", i), StateDir: filepath.Join(state, fmt.Sprint(i))})
			if err != nil {
				b.Fatal(err)
			}
			spec := mountSpec{Mode: ModeOverlay, Root: ws.Root, Upper: ws.upper, Work: ws.work, Cwd: ws.Dir, UserXattr: ws.xattr}
			create += time.Since(t0) + call(benchReq{Op: "mount", Spec: spec, Files: edits, Iter: i})
			t1 := time.Now()
			if _, err := ws.snap.wait(); err != nil {
				b.Fatal(err)
			}
			snap += time.Since(t1)
			t2 := time.Now()
			out, err := ws.Finish(ctx)
			if err != nil || !out.Applied || len(out.Files) != len(edits) {
				b.Fatalf("finish: %+v %v", out, err)
			}
			finish += time.Since(t2)
			t3 := time.Now()
			u := call(benchReq{Op: "umount", Spec: spec})
			umount += u
			teardown += u
			if err := ws.Cleanup(ctx); err != nil {
				b.Fatal(err)
			}
			teardown += time.Since(t3)
			b.StopTimer()
			resetEdits(b, dir)
			b.StartTimer()
		}
		n := float64(b.N)
		b.ReportMetric(float64(create.Microseconds())/1000/n, "create-ms")
		b.ReportMetric(float64(snap.Microseconds())/1000/n, "snapshot-ms")
		b.ReportMetric(float64(finish.Microseconds())/1000/n, "finish-ms")
		b.ReportMetric(float64(teardown.Microseconds())/1000/n, "teardown-ms")
		b.ReportMetric(float64(umount.Microseconds())/1000/n, "umount-ms")
	})
	b.Run("worktree-fallback", func(b *testing.B) {
		state := b.TempDir()
		for i := range b.N {
			ws, err := NewWithSupport(iso.Support()).Prepare(ctx, Options{Dir: dir, ID: fmt.Sprint("w", i), StateDir: filepath.Join(state, fmt.Sprint(i)), ForceWorktree: true})
			if err != nil {
				b.Fatal(err)
			}
			var wtEdits []string
			for _, e := range edits {
				rel, _ := filepath.Rel(dir, e)
				wtEdits = append(wtEdits, filepath.Join(ws.Root, rel))
			}
			if err := editFiles(wtEdits, i); err != nil {
				b.Fatal(err)
			}
			out, err := ws.Finish(ctx)
			if err != nil || !out.Applied || len(out.Files) != len(edits) {
				b.Fatalf("finish: %+v %v", out, err)
			}
			if err := ws.Cleanup(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			resetEdits(b, dir)
			b.StartTimer()
		}
	})
	b.Run("git-worktree-add", func(b *testing.B) {
		// The baseline: what hotl does, minus carrying the dirty state.
		for i := range b.N {
			wt := filepath.Join(dir, ".git", "plain-wt")
			git(b, dir, "worktree", "add", "--detach", "--quiet", wt, "HEAD")
			var wtEdits []string
			for _, e := range edits {
				rel, _ := filepath.Rel(dir, e)
				wtEdits = append(wtEdits, filepath.Join(wt, rel))
			}
			if err := editFiles(wtEdits, i); err != nil {
				b.Fatal(err)
			}
			patch := exec.Command("git", "diff", "--binary", "HEAD")
			patch.Dir = wt
			p, err := patch.Output()
			if err != nil {
				b.Fatal(err)
			}
			apply := exec.Command("git", "apply")
			apply.Dir = dir
			apply.Stdin = bytes.NewReader(p)
			if out, err := apply.CombinedOutput(); err != nil {
				b.Fatalf("apply: %v %s", err, out)
			}
			git(b, dir, "worktree", "remove", "--force", wt)
			b.StopTimer()
			resetEdits(b, dir)
			b.StartTimer()
		}
	})
}
