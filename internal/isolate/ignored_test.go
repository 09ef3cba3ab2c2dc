package isolate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadIgnoredIsStatus: the entries an overlay hides, listed by a walk
// of the directories alone, are exactly those `git status
// --ignored=matching` lists (what it hid before), in every shape an
// ignored file takes: top-level and deep secrets, wholly ignored
// directories (alone or inside an untracked one), directories that hold
// only ignored files, patterns and their negations, info/exclude, a
// symbolic link, odd names, an ignored file beside a tracked one. No
// ignored entry is left visible; nothing else is hidden.
func TestReadIgnoredIsStatus(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, ".gitignore"), "node_modules/\n*.log\n.env\nbuild/\ngen/*\n!gen/keep\nneg/*.tmp\n.brood/\n")
	write(t, filepath.Join(dir, "keep/t.log"), "tracked though ignored\n")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	git(t, dir, "add", ".gitignore", "a.txt")
	git(t, dir, "add", "-f", "keep/t.log")
	git(t, dir, "commit", "-qm", "init")
	write(t, filepath.Join(dir, ".git/info/exclude"), "local-secret\n")
	for _, f := range []string{
		".env", "sub/deep/deeper/.env", "node_modules/a/b.js", "un/node_modules/x/y", "un/z.log",
		"logs/a.log", "logs/b.log", "mixed/a.log", "mixed/ok.txt", "build/out", "gen/keep", "gen/drop",
		"neg/a.tmp", "neg/b.txt", "keep/u.log", "sp ace/q.log", "new\nline.log", "local-secret",
		"nested/only/x.log", ".brood/records/r.json", "u.txt",
	} {
		write(t, filepath.Join(dir, f), "x\n")
	}
	if err := os.Mkdir(filepath.Join(dir, "emptyd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, ".env"), filepath.Join(dir, "link.log")); err != nil {
		t.Fatal(err)
	}
	r, err := openRepo(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readIgnored(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	out := git(t, dir, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching", "--no-renames")
	var want []string
	for _, rec := range strings.Split(out, "\x00") {
		if p, ok := strings.CutPrefix(rec, "!! "); ok {
			want = append(want, strings.TrimSuffix(p, "/"))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("hidden:\n%q\nstatus --ignored=matching:\n%q", got, want)
	}
	for _, secret := range []string{".env", "sub/deep/deeper/.env", "local-secret", "link.log", "new\nline.log"} {
		if !slices.Contains(got, secret) {
			t.Errorf("%q is not hidden", secret)
		}
	}
}
