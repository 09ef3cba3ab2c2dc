package gitx_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/gitx"
)

// countingGit puts a git first in PATH that logs each command line to the
// file it returns, then runs the real git.
func countingGit(t *testing.T) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not found")
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "log")
	write(t, filepath.Join(bin, "git"), "#!/bin/sh\necho \"$*\" >> "+log+"\nexec "+real+" \"$@\"\n", 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

// TestBatchReadsConfigOnce: the commands of a Batch read the
// configuration's driver definitions once per directory and environment
// (an index file aside), a command that only reads a patch reads them not
// at all, and every command still has the repository's filter switched
// off.
func TestBatchReadsConfigOnce(t *testing.T) {
	repo, trap, marks := hostileRepo(t)
	patch := mustGit(t, repo, "diff", "--", "a.txt") + "\n"
	mustGit(t, repo, "config", "filter.evil.clean", trap)
	mustGit(t, repo, "config", "filter.evil.required", "true")
	write(t, filepath.Join(repo, ".gitattributes"), "* filter=evil\n", 0o644)
	other := filepath.Join(filepath.Dir(repo), "other")
	mustGit(t, filepath.Dir(repo), "init", "-q", "-b", "main", other)
	index := filepath.Join(t.TempDir(), "index")
	type run struct {
		dir  string
		env  []string
		args []string
	}
	add := run{repo, nil, []string{"add", "-A"}}
	status := run{repo, nil, []string{"status", "--porcelain"}}
	private := run{repo, []string{"GIT_INDEX_FILE=" + index}, []string{"add", "-A"}}
	elsewhere := run{other, nil, []string{"status", "--porcelain"}}
	numstat := run{repo, nil, []string{"apply", "--numstat", "-R"}}
	check := run{repo, nil, []string{"apply", "--numstat", "--check", "-R"}}
	for _, tc := range []struct {
		name  string
		batch bool
		runs  []run
		reads int
	}{
		{"each command alone", false, []run{add, status, private}, 3},
		{"a batch", true, []run{add, status, private, add}, 1},
		{"a batch in two repositories", true, []run{add, elsewhere, status, elsewhere}, 2},
		{"two batches", false, []run{add}, 1},
		{"a patch's numstat", false, []run{numstat, numstat}, 0},
		{"a numstat that checks", false, []run{check}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := countingGit(t)
			ctx := context.Background()
			if tc.batch {
				ctx = gitx.WithBatch(ctx)
			}
			for _, r := range tc.runs {
				c := gitx.Cmd{Dir: r.dir, Env: r.env}
				if r.args[0] == "apply" {
					c.Stdin = strings.NewReader(patch)
				}
				if _, err := c.Run(ctx, r.args...); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(string(data), " config --show-scope"); got != tc.reads {
				t.Errorf("%d reads of the configuration, want %d:\n%s", got, tc.reads, data)
			}
			if ran(marks) {
				t.Fatal("the repository's filter ran")
			}
		})
	}
}
