package codesnap

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStatClean: the in-process check of a verified checkout vouches for
// it untouched, and never for a
// checkout git's own check finds changed: a file rewritten (even at the
// same size with its mtime set back), added, removed, made executable, a
// directory added or swapped for a symlink to the moved original, a
// symlink retargeted, a racily clean file (dated no earlier
// than the index) rewritten: those it hashes, as git does; an index it does not read (version 4) is left to git.
func TestStatClean(t *testing.T) {
	cases := []struct {
		name   string
		racy   bool // files dated after the index: racily clean
		tamper func(t *testing.T, tree, index string)
		want   bool
	}{
		{"racy, untouched", true, func(*testing.T, string, string) {}, true},
		{"racy, same size, mtime kept", true, func(t *testing.T, tree, _ string) {
			p := filepath.Join(tree, "sub", "c.go")
			st, err := os.Stat(p)
			must(t, err)
			must(t, os.WriteFile(p, []byte("package evil\n"), 0o644))
			must(t, os.Chtimes(p, st.ModTime(), st.ModTime()))
		}, false},
		{"racy, index names other content", true, func(t *testing.T, _, index string) {
			b, err := os.ReadFile(index)
			must(t, err)
			b[12+40] ^= 1 // the first entry's blob id
			must(t, os.WriteFile(index, b, 0o600))
		}, false},
		{"untouched", false, func(*testing.T, string, string) {}, true},
		{"touched", false, func(t *testing.T, tree, _ string) {
			later := time.Now().Add(time.Hour)
			must(t, os.Chtimes(filepath.Join(tree, "a.txt"), later, later))
		}, false}, // (as git's diff-files: the checkout is then made again)
		{"same size, mtime set back", false, func(t *testing.T, tree, _ string) {
			p := filepath.Join(tree, "sub", "c.go")
			st, err := os.Stat(p)
			must(t, err)
			must(t, os.WriteFile(p, []byte("package evil\n"), 0o644))
			must(t, os.Chtimes(p, st.ModTime(), st.ModTime()))
		}, false},
		{"appended", false, func(t *testing.T, tree, _ string) {
			f, err := os.OpenFile(filepath.Join(tree, "a.txt"), os.O_APPEND|os.O_WRONLY, 0)
			must(t, err)
			f.WriteString("evil\n")
			f.Close()
		}, false},
		{"added file", false, func(t *testing.T, tree, _ string) {
			must(t, os.WriteFile(filepath.Join(tree, "sub", "deep", "zz.go"), []byte("package deep\n"), 0o644))
		}, false},
		{"added dir", false, func(t *testing.T, tree, _ string) {
			must(t, os.Mkdir(filepath.Join(tree, "empty"), 0o755))
		}, false},
		{"removed file", false, func(t *testing.T, tree, _ string) {
			must(t, os.Remove(filepath.Join(tree, "sub", "deep", "d.txt")))
		}, false},
		{"made executable", false, func(t *testing.T, tree, _ string) {
			must(t, os.Chmod(filepath.Join(tree, "a.txt"), 0o755))
		}, false},
		{"dir swapped for a symlink", false, func(t *testing.T, tree, _ string) {
			moved := filepath.Join(t.TempDir(), "deep")
			must(t, os.Rename(filepath.Join(tree, "sub", "deep"), moved))
			must(t, os.Symlink(moved, filepath.Join(tree, "sub", "deep")))
		}, false},
		{"symlink retargeted", false, func(t *testing.T, tree, _ string) {
			must(t, os.Remove(filepath.Join(tree, "link")))
			must(t, os.Symlink("sub/c.go", filepath.Join(tree, "link")))
		}, false},
		{"index version 4", false, func(t *testing.T, tree, index string) {
			gitIn(t, tree, index, "update-index", "--index-version", "4")
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tree := t.TempDir()
			gitIn(t, tree, "", "init", "-q")
			files := map[string]string{"a.txt": "a\n", "sub/c.go": "package sub\n", "sub/deep/d.txt": "d\n", "run.sh": "#!/bin/sh\n", "empty.txt": ""}
			for name, data := range files {
				p := filepath.Join(tree, filepath.FromSlash(name))
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(t, os.WriteFile(p, []byte(data), 0o644))
			}
			must(t, os.Chmod(filepath.Join(tree, "run.sh"), 0o755))
			must(t, os.Symlink("a.txt", filepath.Join(tree, "link")))
			gitIn(t, tree, "", "add", "-A")
			gitIn(t, tree, "", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base")
			// As verifyBase makes it: a fresh index of the tree, refreshed.
			index := filepath.Join(t.TempDir(), "index")
			if tc.racy {
				later := time.Now().Add(time.Hour)
				for name := range files {
					must(t, os.Chtimes(filepath.Join(tree, filepath.FromSlash(name)), later, later))
				}
			}
			gitIn(t, tree, index, "read-tree", "HEAD")
			gitIn(t, tree, index, "update-index", "-q", "--refresh")
			tc.tamper(t, tree, index)
			b, err := os.ReadFile(index)
			must(t, err)
			st, err := os.Stat(index)
			must(t, err)
			got := statClean(tree, b, st.ModTime(), "sha1")
			if got != tc.want {
				t.Fatalf("statClean = %v, want %v", got, tc.want)
			}
			g := gitCmd{dir: tree, env: []string{"GIT_DIR=" + filepath.Join(tree, ".git"), "GIT_WORK_TREE=" + tree, "GIT_INDEX_FILE=" + index}}
			if gerr := clean(t.Context(), g); got && gerr != nil {
				t.Fatalf("statClean vouched for a checkout git finds changed: %v", gerr)
			}
		})
	}
}

func gitIn(t testing.TB, dir, index string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if index != "" {
		cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+index)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSmudgeRacy: the entries racily clean against a stamp get size 0, as
// git smudges them (git reads the index, its checksum made anew, and
// checks them by content), and the stat check still vouches for the
// untouched tree by content; against an earlier stamp, nothing changes.
func TestSmudgeRacy(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			tree := t.TempDir()
			gitIn(t, tree, "", "init", "-q", "--object-format="+format)
			for name, data := range map[string]string{"a.txt": "a\n", "sub/c.go": "package sub\n"} {
				p := filepath.Join(tree, filepath.FromSlash(name))
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(t, os.WriteFile(p, []byte(data), 0o644))
			}
			index := filepath.Join(t.TempDir(), "index")
			gitIn(t, tree, index, "add", "-A")
			b, err := os.ReadFile(index)
			must(t, err)
			if same, ok := smudgeRacy(b, time.Now().Add(time.Hour), format); !ok || !bytes.Equal(same, b) {
				t.Fatalf("nothing racy: ok %v, changed %v", ok, !bytes.Equal(same, b))
			}
			out, ok := smudgeRacy(b, time.Unix(1, 0), format)
			if !ok || bytes.Equal(out, b) {
				t.Fatalf("all racy: ok %v, changed %v", ok, !bytes.Equal(out, b))
			}
			must(t, os.WriteFile(index, out, 0o600))
			cmd := exec.Command("git", "ls-files", "--debug")
			cmd.Dir, cmd.Env = tree, append(os.Environ(), "GIT_INDEX_FILE="+index, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			dbg, err := cmd.CombinedOutput()
			if err != nil || strings.Count(string(dbg), "size: 0") != 2 {
				t.Fatalf("git reads the smudged index: %v\n%s", err, dbg)
			}
			if !statClean(tree, out, time.Now(), format) {
				t.Fatal("statClean does not vouch by content for smudged entries of an untouched tree")
			}
		})
	}
}

// TestStatPlanDirStamps: a directory whose names a passing check read,
// its stamp settled, is not read again while its stamp (inode, ctime,
// mtime) is unchanged; any name added to or removed from it, its mtime
// set back after (ctime cannot be), is seen, in the top directory or
// below it. Fails if a directory's names are trusted without its ctime.
func TestStatPlanDirStamps(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, tree string)
		want   bool
	}{
		{"untouched", func(*testing.T, string) {}, true},
		{"file added, mtime set back", func(t *testing.T, tree string) {
			addKeepingTimes(t, filepath.Join(tree, "sub", "deep"), "zz.go", nil)
		}, false},
		{"file added at the top, mtime set back", func(t *testing.T, tree string) {
			addKeepingTimes(t, tree, "zz.go", nil)
		}, false},
		{"directory added, mtime set back", func(t *testing.T, tree string) {
			addKeepingTimes(t, filepath.Join(tree, "sub"), "new", func(p string) error { return os.Mkdir(p, 0o755) })
		}, false},
		{"file removed and the directory's mtime set back", func(t *testing.T, tree string) {
			dir := filepath.Join(tree, "sub", "deep")
			st, err := os.Stat(dir)
			must(t, err)
			must(t, os.Remove(filepath.Join(dir, "d.txt")))
			must(t, os.Chtimes(dir, st.ModTime(), st.ModTime()))
		}, false},
	}
	type setup struct {
		tree  string
		plan  *statPlan
		stamp time.Time
	}
	setups := make([]setup, len(cases))
	for i := range cases {
		tree := t.TempDir()
		gitIn(t, tree, "", "init", "-q")
		for name, data := range map[string]string{"a.txt": "a\n", "sub/c.go": "package sub\n", "sub/deep/d.txt": "d\n"} {
			p := filepath.Join(tree, filepath.FromSlash(name))
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, []byte(data), 0o644))
		}
		index := filepath.Join(t.TempDir(), "index")
		gitIn(t, tree, index, "add", "-A")
		b, err := os.ReadFile(index)
		must(t, err)
		plan, ok := newStatPlan(b, "sha1")
		if !ok {
			t.Fatal("no plan")
		}
		setups[i] = setup{tree, plan, time.Now().Add(time.Hour)}
	}
	// The directories' stamps settle (a clock reading, not a wait for
	// anything of ours), then a check reads and keeps them.
	for until := time.Now().Add(settleAge + 10*time.Millisecond); time.Now().Before(until); {
		time.Sleep(time.Until(until))
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := setups[i]
			if !s.plan.clean(s.tree, s.stamp) {
				t.Fatal("the untouched tree is not clean")
			}
			for d, st := range s.plan.read {
				if st == (dirStamp{}) {
					t.Fatalf("directory %d (%q): no stamp kept", d, s.plan.dirs[d].name)
				}
			}
			tc.tamper(t, s.tree)
			if got := s.plan.clean(s.tree, s.stamp); got != tc.want {
				t.Fatalf("clean = %v after the tamper, want %v", got, tc.want)
			}
		})
	}
}

// addKeepingTimes makes name in dir (a file, or by mk) and sets dir's
// mtime back to what it was.
func addKeepingTimes(t *testing.T, dir, name string, mk func(string) error) {
	t.Helper()
	st, err := os.Stat(dir)
	must(t, err)
	p := filepath.Join(dir, name)
	if mk == nil {
		must(t, os.WriteFile(p, []byte("evil\n"), 0o644))
	} else {
		must(t, mk(p))
	}
	must(t, os.Chtimes(dir, st.ModTime(), st.ModTime()))
}

// TestStatPlanKeepsNoUnsettledStamp: a check right after the tree was
// made keeps no directory stamp (their ctimes are within settleAge of
// the check: a name changed in the same clock tick would leave one as it
// is), so the next check reads every directory's names again. Fails if
// unsettled stamps are kept.
func TestStatPlanKeepsNoUnsettledStamp(t *testing.T) {
	tree := t.TempDir()
	gitIn(t, tree, "", "init", "-q")
	for name, data := range map[string]string{"a.txt": "a\n", "sub/c.go": "package sub\n", "sub/deep/d.txt": "d\n"} {
		p := filepath.Join(tree, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o644))
	}
	index := filepath.Join(t.TempDir(), "index")
	gitIn(t, tree, index, "add", "-A")
	b, err := os.ReadFile(index)
	must(t, err)
	plan, ok := newStatPlan(b, "sha1")
	if !ok || !plan.clean(tree, time.Now().Add(time.Hour)) {
		t.Fatal("the untouched tree is not clean")
	}
	for d, st := range plan.read {
		if st != (dirStamp{}) {
			t.Fatalf("directory %d (%q): a stamp kept within %v of its change", d, plan.dirs[d].name, settleAge)
		}
	}
	// A name added now, the directory's mtime set back, is seen.
	addKeepingTimes(t, filepath.Join(tree, "sub"), "zz.go", nil)
	if plan.clean(tree, time.Now().Add(time.Hour)) {
		t.Fatal("a name added right after a check is not seen")
	}
}
