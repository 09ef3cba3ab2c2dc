package codesnap

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBulkCheckinOnlyWherePays: Capture's add streams blobs into one pack
// (bulk checkin) where many of the files it reads are new objects, and
// writes loose objects where they exist already (a tree captured before,
// files committed before) or are few. Either way the tree is the one the
// user's own `git add -A` gives, and every object it names is in the
// repository: in a new pack when bulk, loose otherwise (git count-objects).
func TestBulkCheckinOnlyWherePays(t *testing.T) {
	files := func(t *testing.T, top, dir, tag string, n int) {
		for i := range n {
			p := filepath.Join(top, dir, fmt.Sprint(i/50), fmt.Sprint("f", i, ".txt"))
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, fmt.Appendf(nil, "%s %s %d\n", t.Name(), tag, i), 0o644))
		}
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, top string)
		bulk  bool
	}{
		{"clean", func(*testing.T, string) {}, false},
		{"few new files", func(t *testing.T, top string) { files(t, top, "new", "a", 20) }, false},
		{"many new files", func(t *testing.T, top string) { files(t, top, "new", "a", 300) }, true},
		{"many tracked files modified", func(t *testing.T, top string) {
			files(t, top, "old", "a", 300)
			gitOut(t, top, "add", "-A")
			gitOut(t, top, "commit", "-q", "-m", "old")
			files(t, top, "old", "b", 300)
		}, true},
		{"the same tree captured before, one file edited", func(t *testing.T, top string) {
			files(t, top, "new", "a", 300)
			if _, err := worktreeTree(t.Context(), top, filepath.Join(top, ".git")); err != nil {
				t.Fatal(err)
			}
			// (loose: this object is new, and written)
			must(t, os.WriteFile(filepath.Join(top, "new", "0", "f0.txt"), []byte("edited\n"), 0o644))
		}, false},
		{"committed files moved (staged, then again on disk)", func(t *testing.T, top string) {
			files(t, top, "old", "a", 300)
			gitOut(t, top, "add", "-A")
			gitOut(t, top, "commit", "-q", "-m", "old")
			gitOut(t, top, "mv", "old", "moved")
			must(t, os.Rename(filepath.Join(top, "moved"), filepath.Join(top, "copy")))
		}, false},
		{"half the files new", func(t *testing.T, top string) {
			files(t, top, "new", "a", 300)
			if _, err := worktreeTree(t.Context(), top, filepath.Join(top, ".git")); err != nil {
				t.Fatal(err)
			}
			files(t, top, "more", "b", 300)
		}, true},
		{"many links", func(t *testing.T, top string) {
			for i := range 300 {
				must(t, os.Symlink(fmt.Sprint("target", i), filepath.Join(top, fmt.Sprint("l", i))))
			}
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			top := t.TempDir()
			gitOut(t, top, "init", "-q", "-b", "main")
			gitOut(t, top, "config", "gc.auto", "0")
			must(t, os.WriteFile(filepath.Join(top, "a.txt"), []byte("a\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(top, ".gitignore"), []byte("*.log\n"), 0o644))
			gitOut(t, top, "add", "-A")
			gitOut(t, top, "commit", "-q", "-m", "first")
			tc.setup(t, top)
			must(t, os.WriteFile(filepath.Join(top, "ignored.log"), []byte("never captured\n"), 0o644))
			g := gitCmd{dir: top}
			if got := bulkCheckin(t.Context(), g, top); got != tc.bulk {
				t.Fatalf("bulkCheckin = %v, want %v", got, tc.bulk)
			}
			packs := countPacks(t, top)
			tree, err := worktreeTree(t.Context(), top, filepath.Join(top, ".git"))
			if err != nil {
				t.Fatal(err)
			}
			// (write-tree writes its trees loose either way.)
			if got := countPacks(t, top); tc.bulk && got != packs+1 || !tc.bulk && got != packs {
				t.Errorf("bulk %v: packs %d -> %d", tc.bulk, packs, got)
			}
			gitOut(t, top, "add", "-A")
			if want := gitOut(t, top, "write-tree"); tree != want {
				t.Fatalf("captured tree %s, the user's add -A gives %s", tree, want)
			}
			if out := gitOut(t, top, "fsck", "--connectivity-only", "--no-dangling"); out != "" {
				t.Fatalf("git fsck: %s", out)
			}
		})
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// countPacks is the repository's number of packs (git count-objects).
func countPacks(t *testing.T, top string) int {
	for _, line := range strings.Split(gitOut(t, top, "count-objects", "-v"), "\n") {
		if v, ok := strings.CutPrefix(line, "packs: "); ok {
			n, err := strconv.Atoi(v)
			must(t, err)
			return n
		}
	}
	t.Fatal("git count-objects -v: no packs line")
	return 0
}
