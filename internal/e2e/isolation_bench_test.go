package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkIsolatedChild measures what isolation adds to one writer child,
// end to end through real processes: `brood subagent general-purpose` that
// writes one file, with --isolation worktree (an overlay copy where the
// machine allows it; BENCH_FORCE_WORKTREE=1 for the git worktree fallback)
// against --isolation none, in the same run, on repositories of 1k, 10k and
// 40k committed files. Metrics: isolated-ms and inplace-ms per child, and
// overhead-ms (their difference) and ratio.
func BenchmarkIsolatedChild(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1000, 10000, 40000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			root, env := benchProject(b, exe, n)
			script := filepath.Join(b.TempDir(), "s.yaml")
			os.WriteFile(script, []byte("agents:\n  general-purpose:\n    - tools: [{Write: {file_path: \"out.txt\", content: \"x\\n\"}}]\n    - say: \"## What I did\\nWrote.\\n\\n## What I found\\nok\\n\\n## Files changed\\nout.txt\\n\\n## Problems\\nnone\"\n"), 0o644)
			run := func(iso string) time.Duration {
				os.Remove(filepath.Join(root, "out.txt"))
				cmd := exec.Command(exe, "subagent", "general-purpose", "--isolation", iso, "--allow", "Write", "--model", "script:"+script, "--description", "w", "Write out.txt.")
				cmd.Dir, cmd.Env = root, env
				t0 := time.Now()
				out, err := cmd.CombinedOutput()
				d := time.Since(t0)
				if err != nil || !strings.Contains(string(out), `status="done"`) {
					b.Fatalf("%s child: %v\n%s", iso, err, out)
				}
				return d
			}
			run("none")
			run("worktree") // warm both paths (page cache, snapshot index)
			var iso, inplace time.Duration
			b.ResetTimer()
			for range b.N {
				inplace += run("none")
				iso += run("worktree")
			}
			k := float64(b.N)
			b.ReportMetric(float64(iso.Microseconds())/1000/k, "isolated-ms")
			b.ReportMetric(float64(inplace.Microseconds())/1000/k, "inplace-ms")
			b.ReportMetric(float64((iso-inplace).Microseconds())/1000/k, "overhead-ms")
			b.ReportMetric(float64(iso)/float64(inplace), "ratio")
		})
	}
}

// benchProject is a committed repository of n small files (cached in the
// temp directory across runs) with an environment for brood.
func benchProject(b *testing.B, exe string, n int) (string, []string) {
	b.Helper()
	root := filepath.Join(os.TempDir(), fmt.Sprintf("brood-bench-child-%d", n))
	env := []string{mainEnv + "=1", "HOME=" + b.TempDir(), "BROOD_CHILD_EXE=" + exe, "PATH=" + os.Getenv("PATH"), "BROOD_TRUST_PROJECT=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost"}
	if os.Getenv("BENCH_FORCE_WORKTREE") == "1" {
		env = append(env, "BROOD_FORCE_WORKTREE=1")
	}
	if _, err := os.Stat(filepath.Join(root, ".ready")); err == nil {
		exec.Command("git", "-C", root, "worktree", "prune").Run()
		return root, env
	}
	os.RemoveAll(root)
	for i := range n {
		p := filepath.Join(root, fmt.Sprintf("pkg%02d/sub%03d/f%02d.txt", (i/100)%20, i/100, i%100))
		if i%100 == 0 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "file %d\n", i), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte(".ready\n.env\nbuild/\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".env"), []byte("SECRET=1\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "bench"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = root, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(root, ".ready"), nil, 0o644)
	return root, env
}
