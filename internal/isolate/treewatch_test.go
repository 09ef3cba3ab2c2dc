package isolate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gitLog puts a git in front of the real one on PATH that logs each
// command's first argument to the file it returns.
func gitLog(t *testing.T) string {
	t.Helper()
	bin, log := t.TempDir(), filepath.Join(t.TempDir(), "git.log")
	real := "git"
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if fi, err := os.Stat(filepath.Join(d, "git")); err == nil && !fi.IsDir() {
			real = filepath.Join(d, "git")
			break
		}
	}
	write(t, filepath.Join(bin, "git"), "#!/bin/sh\nfor a in \"$@\"; do case $a in -*|*=*) ;; *) echo \"$a\" >> '"+log+"'; break;; esac; done\nexec '"+real+"' \"$@\"\n")
	if err := os.Chmod(filepath.Join(bin, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

// statuses counts the status walks in the log since mark (its length then).
func statuses(t *testing.T, log string, mark int) int {
	b, _ := os.ReadFile(log)
	return strings.Count(string(b[min(mark, len(b)):]), "status\n")
}

// TestBaseMovedByWatch: with a tree watch (a warm cache), a finish on a
// tree nothing moved in, or that moved only beneath ignored entries, takes
// no walk; every move of the parent's tree — an edit at the same size
// with its mtime set back or in the same second, a new file (or .env)
// deep down, a rename, a link put in a file's place, a .gitignore edit
// (one that ignores a new file too) or an info/exclude edit, a nested
// repository, the index rewritten — or a cache that names as ignored what
// is not, is walked and named, as without the watch.
func TestBaseMovedByWatch(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	log := gitLog(t)
	old := time.Now().Add(-time.Hour)
	cases := []struct {
		name  string
		move  func(t *testing.T, dir string)
		moved []string // nil: no walk at finish
	}{
		{"nothing moved", func(*testing.T, string) {}, nil},
		{"only ignored entries", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "node_modules", "n.js"), "n\n")
			write(t, filepath.Join(dir, "node_modules", "m.js"), "changed\n")
		}, nil},
		{"edit at the same size, mtime set back", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "sub/b.txt"), strings.Replace(lines("b", 10), "b3", "B3", 1))
			os.Chtimes(filepath.Join(dir, "sub/b.txt"), old, old)
		}, []string{"sub/b.txt"}},
		{"same size, same second", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "sub/b.txt"), strings.Replace(lines("b", 10), "b4", "B4", 1))
		}, []string{"sub/b.txt"}},
		{"a new .env deep down", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "deep/er/.env"), "TOKEN=x\n")
		}, []string{}}, // walked (new to the watch), and ignored: never the tree's
		{".gitignore edit that ignores a new file", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".gitignore"), ".env\nnode_modules/\n.brood/\nkey.pem\n")
			write(t, filepath.Join(dir, "deep/key.pem"), "k\n")
		}, []string{".gitignore"}},
		{"new file deep down", func(t *testing.T, dir string) { write(t, filepath.Join(dir, "deep/er/still/n.txt"), "n\n") }, []string{"deep/er/still/n.txt"}},
		{"rename", func(t *testing.T, dir string) {
			os.Rename(filepath.Join(dir, "deep/er/still/k.txt"), filepath.Join(dir, "deep/er/still/l.txt"))
		}, []string{"deep/er/still/k.txt", "deep/er/still/l.txt"}},
		{"link in a file's place", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "dir/x.txt"))
			os.Symlink("/etc/passwd", filepath.Join(dir, "dir/x.txt"))
		}, []string{"dir/x.txt"}},
		{".gitignore edit", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".gitignore"), ".env\n.brood/\n")
		}, []string{".gitignore", "node_modules/m.js"}},
		{"info/exclude edit", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".git/info/exclude"), "u.txt\n")
		}, []string{}}, // walked; u.txt, dirty at the spawn, is read again all the same
		{"nested repository", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "deep/inner/f"), "f\n")
			git(t, filepath.Join(dir, "deep/inner"), "init", "-q")
			git(t, filepath.Join(dir, "deep/inner"), "add", "f")
			git(t, filepath.Join(dir, "deep/inner"), "commit", "-qm", "f")
		}, []string{"deep/inner"}},
		{"index rewritten", func(t *testing.T, dir string) { git(t, dir, "rm", "-q", "--cached", "dir/y.txt") }, []string{}},
	}
	iso := testIsolator(t)
	iso.watchDir = t.TempDir()
	for _, m := range modes(t, iso) {
		for _, tt := range cases {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				dir := watchedRepo(t, old)
				warm(t, iso, dir, m.force)
				mark := len(read(t, log))
				ws := prepare(t, iso, dir, "W", m.force)
				runIsolated(t, ws, "true")
				if _, err := ws.snap.wait(); err != nil {
					t.Fatal(err)
				}
				tt.move(t, dir)
				begun := len(read(t, log))
				out, err := ws.Finish(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if n := statuses(t, log, begun); (n == 0) != (tt.moved == nil) {
					t.Errorf("%d status walks at finish; want a walk: %v", n, tt.moved != nil)
				}
				if want := tt.moved; !slices.Equal(out.BaseMoved, want) && len(out.BaseMoved)+len(want) > 0 {
					t.Errorf("base moved %v, want %v", out.BaseMoved, want)
				}
				if statuses(t, log, mark) == 0 {
					t.Error("no spawn walk")
				}
			})
		}
	}
	t.Run("a cache that names a tracked directory ignored", func(t *testing.T) {
		dir := watchedRepo(t, old)
		warm(t, iso, dir, true)
		r, err := openRepo(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		newWatchCache(iso.watchDir, r.top, r.gitDir).store(r.top, []string{"sub", "node_modules"}, nil)
		ws := prepare(t, iso, dir, "P", true)
		write(t, filepath.Join(dir, "sub/b.txt"), strings.Replace(lines("b", 10), "b3", "B3", 1))
		out, err := ws.Finish(context.Background())
		if err != nil || !slices.Equal(out.BaseMoved, []string{"sub/b.txt"}) {
			t.Fatalf("base moved %v %v, want sub/b.txt", out.BaseMoved, err)
		}
	})
}

// watchedRepo is newRepo with its files' stamps an hour old (none racy)
// and a clean file deep down.
func watchedRepo(t *testing.T, old time.Time) string {
	dir := newRepo(t)
	write(t, filepath.Join(dir, "deep/er/still/k.txt"), "k\n")
	git(t, dir, "add", "deep")
	git(t, dir, "commit", "-qm", "deep")
	filepath.WalkDir(dir, func(p string, _ os.DirEntry, _ error) error {
		os.Chtimes(p, old, old)
		return nil
	})
	return dir
}

// warm runs one isolated writer on dir, which fills the watch's cache.
func warm(t *testing.T, iso *Isolator, dir string, force bool) {
	t.Helper()
	ws := prepare(t, iso, dir, "warm", force)
	runIsolated(t, ws, "true")
	if _, err := ws.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	ws.Cleanup(context.Background())
}

// TestWatchCachesPruned: past maxWatchCaches caches, a store removes the
// older half, never the one it wrote.
func TestWatchCachesPruned(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range maxWatchCaches {
		c := newWatchCache(dir, "/t/"+strconv.Itoa(i), "/t/.git")
		c.store("/t/"+strconv.Itoa(i), []string{"x"}, nil)
		os.Chtimes(c.path, old, old)
	}
	c := newWatchCache(dir, "/t/new", "/t/.git")
	c.store("/t/new", []string{"x"}, nil)
	des, _ := os.ReadDir(dir)
	if len(des) > maxWatchCaches/2+1 {
		t.Errorf("%d caches kept, want at most %d", len(des), maxWatchCaches/2+1)
	}
	if got, ok := c.load("/t/new"); !ok || !slices.Equal(got, []string{"x"}) {
		t.Errorf("the cache just written is gone: %v %v", got, ok)
	}
}

// TestBaseMovedByExcludesFile (review 15 W1): the user's ~/.gitconfig
// names a global excludes file elsewhere (core.excludesFile) that ignores
// node_modules/; the user drops that line while the child runs. The watch
// stamps the file git resolves, so the finish walks and names what is no
// longer ignored, as without the watch.
func TestBaseMovedByExcludesFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	global := filepath.Join(home, "elsewhere", "ignore")
	write(t, global, "node_modules/\n")
	write(t, filepath.Join(home, ".gitconfig"), "[core]\n\texcludesFile = ~/elsewhere/ignore\n")
	old := time.Now().Add(-time.Hour)
	iso := testIsolator(t)
	iso.watchDir = t.TempDir()
	for _, m := range modes(t, iso) {
		t.Run(m.name, func(t *testing.T) {
			dir := watchedRepo(t, old)
			write(t, filepath.Join(dir, ".gitignore"), ".env\n.brood/\n")
			git(t, dir, "commit", "-qam", "node_modules/ ignored by the user's excludes only")
			write(t, global, "node_modules/\n")
			warm(t, iso, dir, m.force)
			ws := prepare(t, iso, dir, "X", m.force)
			runIsolated(t, ws, "true")
			if _, err := ws.snap.wait(); err != nil {
				t.Fatal(err)
			}
			write(t, global, "")
			out, err := ws.Finish(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(out.BaseMoved, "node_modules/m.js") {
				t.Errorf("base moved %v, want node_modules/m.js in it", out.BaseMoved)
			}
		})
	}
}
