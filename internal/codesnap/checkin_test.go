package codesnap

import (
	"crypto/rand"
	"encoding/base64"
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
// files committed before) or are few; the bulk pack is uncompressed where
// the files do not compress (random text). Either way the tree is the one
// the user's own `git add -A` gives, and every object it names is in the
// repository: in a new pack when bulk (git count-objects: its size against
// the files'), loose otherwise.
func TestBulkCheckinOnlyWherePays(t *testing.T) {
	raw := make([]byte, 3072)
	rand.Read(raw)
	random := base64.StdEncoding.EncodeToString(raw)
	// files writes n files under dir, of compressible text or of random
	// text (unique either way), and returns their size.
	files := func(t *testing.T, top, dir, tag string, n int, text bool) (size int) {
		for i := range n {
			p := filepath.Join(top, dir, fmt.Sprint(i/50), fmt.Sprint("f", i, ".txt"))
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			body := random
			if text {
				body = strings.Repeat("func f() { return the same line of source }\n", 60)
			}
			b := fmt.Appendf(nil, "%s %s %d\n%s", t.Name(), tag, i, body)
			must(t, os.WriteFile(p, b, 0o644))
			size += len(b)
		}
		return size
	}
	commit := func(t *testing.T, top string) {
		gitOut(t, top, "add", "-A")
		gitOut(t, top, "commit", "-q", "--allow-empty", "-m", "more")
	}
	capture := func(t *testing.T, top string) {
		if _, err := worktreeTree(t.Context(), top, filepath.Join(top, ".git"), "", "sha1", ""); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, top string) (size int) // of the files a new pack holds
		want  string
	}{
		{"clean", func(*testing.T, string) int { return 0 }, loose},
		{"few new files", func(t *testing.T, top string) int { return files(t, top, "new", "a", 20, true) }, loose},
		{"many new files of text", func(t *testing.T, top string) int { return files(t, top, "new", "a", 300, true) }, bulk},
		{"many new files of random text", func(t *testing.T, top string) int { return files(t, top, "new", "a", 300, false) }, stored},
		{"many tracked files modified", func(t *testing.T, top string) int {
			files(t, top, "old", "a", 300, true)
			commit(t, top)
			return files(t, top, "old", "b", 300, true)
		}, bulk},
		{"the same tree captured before, one file edited", func(t *testing.T, top string) int {
			files(t, top, "new", "a", 300, false)
			capture(t, top)
			// (loose: this object is new, and written)
			must(t, os.WriteFile(filepath.Join(top, "new", "0", "f0.txt"), []byte("edited\n"), 0o644))
			return 0
		}, loose},
		{"committed files moved (staged, then again on disk)", func(t *testing.T, top string) int {
			files(t, top, "old", "a", 300, true)
			commit(t, top)
			gitOut(t, top, "mv", "old", "moved")
			must(t, os.Rename(filepath.Join(top, "moved"), filepath.Join(top, "copy")))
			return 0
		}, loose},
		{"half the files new", func(t *testing.T, top string) int {
			files(t, top, "new", "a", 300, true)
			capture(t, top)
			return files(t, top, "more", "b", 300, true)
		}, bulk},
		{"many links", func(t *testing.T, top string) int {
			for i := range 300 {
				must(t, os.Symlink(fmt.Sprint("target", i), filepath.Join(top, fmt.Sprint("l", i))))
			}
			return 0
		}, loose},
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
			commit(t, top)
			size := tc.setup(t, top)
			must(t, os.WriteFile(filepath.Join(top, "ignored.log"), []byte("never captured\n"), 0o644))
			if got := checkinWay(t, top); got != tc.want {
				t.Fatalf("add -A: %s, want %s", got, tc.want)
			}
			tree := captureCountingPacks(t, top, tc.want, size)
			commit(t, top)
			if want := gitOut(t, top, "rev-parse", "HEAD^{tree}"); tree != want {
				t.Fatalf("captured tree %s, the user's add -A gives %s", tree, want)
			}
			if out := gitOut(t, top, "fsck", "--no-dangling"); out != "" {
				t.Fatalf("git fsck: %s", out)
			}
		})
	}
}

// The ways add -A writes the objects it reads (checkinArgs).
const loose, bulk, stored = "loose", "bulk", "bulk, stored"

// checkinWay is how checkinArgs has add -A write objects in top.
func checkinWay(t *testing.T, top string) string {
	switch args := strings.Join(checkinArgs(t.Context(), gitCmd{dir: top}, top), " "); args {
	case "":
		return loose
	case "-c core.bigFileThreshold=1":
		return bulk
	case "-c core.bigFileThreshold=1 -c pack.compression=0":
		return stored
	default:
		t.Fatalf("checkinArgs: %q", args)
		return ""
	}
}

// captureCountingPacks captures top's work tree and checks what its
// objects went into: no new pack when loose; one more when bulk, smaller
// than half the size of the (text) files, or when stored, no smaller than
// them. (write-tree writes its trees loose either way.)
func captureCountingPacks(t *testing.T, top, way string, size int) string {
	packs, kib := countPacks(t, top)
	tree, err := worktreeTree(t.Context(), top, filepath.Join(top, ".git"), "", "sha1", "")
	if err != nil {
		t.Fatal(err)
	}
	packs2, kib2 := countPacks(t, top)
	switch {
	case way == loose && packs2 != packs:
		t.Errorf("loose: packs %d -> %d", packs, packs2)
	case way != loose && packs2 != packs+1:
		t.Errorf("%s: packs %d -> %d; want one more", way, packs, packs2)
	case way == stored && (kib2-kib)*1024 < size:
		t.Errorf("stored: the pack is %d KiB for %d bytes of files", kib2-kib, size)
	case way == bulk && (kib2-kib)*1024*2 > size:
		t.Errorf("bulk: the pack is %d KiB for %d bytes of text", kib2-kib, size)
	}
	return tree
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

// countPacks is the repository's number of packs and their size in KiB
// (git count-objects -v).
func countPacks(t *testing.T, top string) (packs, kib int) {
	for _, line := range strings.Split(gitOut(t, top, "count-objects", "-v"), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, err := strconv.Atoi(v)
		switch k {
		case "packs":
			must(t, err)
			packs = n
		case "size-pack":
			must(t, err)
			kib = n
		}
	}
	return packs, kib
}
