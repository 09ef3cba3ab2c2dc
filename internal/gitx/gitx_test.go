package gitx_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/gitx"
)

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, path, data string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
}

// testEnv keeps the machine's git configuration out and gives commits an
// identity.
func testEnv(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"} {
		t.Setenv(k, "t")
	}
	for _, k := range []string{"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(k, "t@t")
	}
}

// hostileRepo is a repository with one commit and a dirty file; trap is a
// script that records its name in marks when it runs.
func hostileRepo(t *testing.T) (repo, trap, marks string) {
	t.Helper()
	testEnv(t)
	root := t.TempDir()
	repo, marks = filepath.Join(root, "repo"), filepath.Join(root, "marks")
	trap = filepath.Join(root, "trap.sh")
	write(t, trap, "#!/bin/sh\necho \"$0 $*\" >> "+marks+"\n", 0o755)
	mustGit(t, root, "init", "-q", "-b", "main", repo)
	write(t, filepath.Join(repo, "a.txt"), "one\n", 0o644)
	write(t, filepath.Join(repo, "b.bin"), "bee\n", 0o644)
	mustGit(t, repo, "add", "-A")
	mustGit(t, repo, "commit", "-q", "-m", "first")
	write(t, filepath.Join(repo, "a.txt"), "one\ntwo\n", 0o644)
	return repo, trap, marks
}

func ran(marks string) bool {
	_, err := os.Stat(marks)
	return err == nil
}

// TestRepositoryProgramsNeverRun: for each program a repository's
// configuration can name, a command that would run it runs it with plain
// git (the trap is real) and never through gitx.
func TestRepositoryProgramsNeverRun(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, repo, trap string)
		args  []string
		env   []string // for the plain-git control run only
	}{
		{"fsmonitor", func(t *testing.T, repo, trap string) {
			mustGit(t, repo, "config", "core.fsmonitor", trap)
		}, []string{"status", "--porcelain"}, nil},
		{"hook", func(t *testing.T, repo, trap string) {
			write(t, filepath.Join(repo, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexec "+trap+"\n", 0o755)
		}, []string{"commit", "-q", "-am", "x"}, nil},
		{"hooksPath", func(t *testing.T, repo, trap string) {
			write(t, filepath.Join(repo, "myhooks", "pre-commit"), "#!/bin/sh\nexec "+trap+"\n", 0o755)
			mustGit(t, repo, "config", "core.hooksPath", "myhooks")
		}, []string{"commit", "-q", "-am", "x"}, nil},
		{"external diff", func(t *testing.T, repo, trap string) {
			mustGit(t, repo, "config", "diff.external", trap)
		}, []string{"diff"}, nil},
		{"diff driver command", func(t *testing.T, repo, trap string) {
			write(t, filepath.Join(repo, ".gitattributes"), "*.txt diff=evil\n", 0o644)
			mustGit(t, repo, "config", "diff.evil.command", trap)
		}, []string{"diff"}, nil},
		{"textconv", func(t *testing.T, repo, trap string) {
			write(t, filepath.Join(repo, ".gitattributes"), "*.txt diff=evil\n", 0o644)
			mustGit(t, repo, "config", "diff.evil.textconv", trap)
		}, []string{"diff", "--textconv"}, nil},
		{"clean filter", func(t *testing.T, repo, trap string) {
			write(t, filepath.Join(repo, ".gitattributes"), "*.txt filter=evil\n", 0o644)
			mustGit(t, repo, "config", "filter.evil.clean", trap)
			mustGit(t, repo, "config", "filter.evil.required", "true")
		}, []string{"add", "-A"}, nil},
		{"process filter", func(t *testing.T, repo, trap string) {
			write(t, filepath.Join(repo, ".gitattributes"), "*.txt filter=evil\n", 0o644)
			mustGit(t, repo, "config", "filter.evil.process", trap)
		}, []string{"update-index", "--add", "a.txt", ".gitattributes"}, nil},
		{"smudge filter", func(t *testing.T, repo, trap string) {
			write(t, filepath.Join(repo, ".git", "info", "attributes"), "*.txt filter=evil\n", 0o644)
			mustGit(t, repo, "config", "filter.evil.smudge", trap)
			os.Remove(filepath.Join(repo, "a.txt"))
		}, []string{"checkout-index", "-f", "-a"}, nil},
		{"filter in an included file", func(t *testing.T, repo, trap string) {
			write(t, filepath.Join(repo, ".gitattributes"), "*.txt filter=inc\n", 0o644)
			inc := filepath.Join(filepath.Dir(repo), "included.cfg")
			write(t, inc, "[filter \"inc\"]\n\tclean = "+trap+"\n", 0o644)
			mustGit(t, repo, "config", "include.path", inc)
		}, []string{"add", "-A"}, nil},
		{"filter named with =", func(t *testing.T, repo, trap string) {
			write(t, filepath.Join(repo, ".gitattributes"), "*.txt filter=a=b\n", 0o644)
			mustGit(t, repo, "config", "filter.a=b.clean", trap)
		}, []string{"add", "-A"}, nil},
		{"ssh command", func(t *testing.T, repo, trap string) {
			mustGit(t, repo, "config", "core.sshCommand", trap)
		}, []string{"fetch", "-q", "--", "ssh://brood.invalid/x.git"}, nil},
		{"GIT_SSH_COMMAND", func(t *testing.T, repo, trap string) {
			t.Setenv("GIT_SSH_COMMAND", trap)
		}, []string{"fetch", "-q", "--", "ssh://brood.invalid/x.git"}, nil},
		{"upload-pack of a named remote", func(t *testing.T, repo, trap string) {
			origin := filepath.Join(filepath.Dir(repo), "origin.git")
			mustGit(t, repo, "clone", "-q", "--bare", repo, origin)
			mustGit(t, repo, "remote", "add", "origin", origin)
			mustGit(t, repo, "config", "remote.origin.uploadpack", trap)
		}, []string{"fetch", "-q", "origin"}, nil},
		{"ext transport", func(t *testing.T, repo, trap string) {
			mustGit(t, repo, "config", "protocol.ext.allow", "always")
		}, []string{"fetch", "-q", "--", "ext::TRAP"}, nil},
		{"credential helper", func(t *testing.T, repo, trap string) {
			mustGit(t, repo, "config", "credential.helper", "!"+trap)
			mustGit(t, repo, "config", "credential.http://127.0.0.1.helper", "!"+trap)
		}, []string{"credential", "fill"}, nil},
		{"merge driver", func(t *testing.T, repo, trap string) {
			write(t, filepath.Join(repo, ".gitattributes"), "*.txt merge=evil\n", 0o644)
			mustGit(t, repo, "config", "merge.evil.driver", trap+" %O %A %B")
			mustGit(t, repo, "add", "-A")
			mustGit(t, repo, "commit", "-q", "-m", "attrs")
			mustGit(t, repo, "checkout", "-q", "-b", "side")
			write(t, filepath.Join(repo, "a.txt"), "side\n", 0o644)
			mustGit(t, repo, "commit", "-q", "-am", "side")
			mustGit(t, repo, "checkout", "-q", "main")
			write(t, filepath.Join(repo, "a.txt"), "main\n", 0o644)
			mustGit(t, repo, "commit", "-q", "-am", "main")
		}, []string{"merge", "-q", "--no-edit", "side"}, nil},
		{"gpg program", func(t *testing.T, repo, trap string) {
			mustGit(t, repo, "config", "commit.gpgSign", "true")
			mustGit(t, repo, "config", "gpg.program", trap)
		}, []string{"commit", "-q", "-am", "signed"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, through := range []string{"plain git", "gitx"} {
				repo, trap, marks := hostileRepo(t)
				args := tc.args
				for i, a := range args {
					args[i] = strings.ReplaceAll(a, "TRAP", trap)
				}
				tc.setup(t, repo, trap)
				var in string
				if tc.name == "credential helper" {
					in = "protocol=http\nhost=127.0.0.1\n\n"
				}
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				if through == "plain git" {
					cmd := exec.CommandContext(ctx, "git", args...)
					cmd.Dir, cmd.Stdin = repo, strings.NewReader(in)
					cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
					out, _ := cmd.CombinedOutput()
					if !ran(marks) {
						t.Fatalf("control: plain `git %s` did not run the trap, so this case proves nothing:\n%s", strings.Join(args, " "), out)
					}
				} else {
					_, err := gitx.Cmd{Dir: repo, Stdin: strings.NewReader(in)}.Run(ctx, args...)
					if ran(marks) {
						b, _ := os.ReadFile(marks)
						t.Fatalf("`git %s` through gitx ran the repository's program (err %v): %s", strings.Join(args, " "), err, b)
					}
				}
				cancel()
			}
		})
	}
}

// TestFilteredContentStaysRaw: with the repository's clean filter off, a
// file is hashed as it is on disk, and the command still succeeds (a
// required driver is not required any more).
func TestFilteredContentStaysRaw(t *testing.T) {
	repo, trap, marks := hostileRepo(t)
	write(t, filepath.Join(repo, ".gitattributes"), "*.txt filter=evil\n", 0o644)
	mustGit(t, repo, "config", "filter.evil.clean", trap)
	mustGit(t, repo, "config", "filter.evil.required", "true")
	if _, err := gitx.Run(t.Context(), repo, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	got, err := gitx.Run(t.Context(), repo, "cat-file", "-p", ":a.txt")
	if err != nil || got != "one\ntwo\n" {
		t.Fatalf("staged a.txt %q, %v", got, err)
	}
	if ran(marks) {
		t.Fatal("the clean filter ran")
	}
}

// TestUserFiltersStay: a filter of the user's own configuration (git-lfs,
// installed globally) still runs; only the repository's are off.
func TestUserFiltersStay(t *testing.T) {
	repo, trap, marks := hostileRepo(t)
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, "[filter \"mine\"]\n\tclean = "+trap+"\n", 0o644)
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	write(t, filepath.Join(repo, ".gitattributes"), "*.txt filter=mine\n", 0o644)
	if _, err := gitx.Run(t.Context(), repo, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if !ran(marks) {
		t.Fatal("the user's own filter did not run")
	}
}

// TestPagerNeverRuns: on a terminal, git starts the configured pager;
// through gitx it does not, even when the caller hands git the terminal.
func TestPagerNeverRuns(t *testing.T) {
	for _, through := range []string{"plain git", "gitx"} {
		repo, trap, marks := hostileRepo(t)
		mustGit(t, repo, "config", "core.pager", trap)
		mustGit(t, repo, "config", "pager.log", trap)
		tty := openPTY(t)
		var cmd *exec.Cmd
		if through == "plain git" {
			cmd = exec.Command("git", "log", "-1")
			cmd.Dir = repo
		} else {
			var err error
			if cmd, err = (gitx.Cmd{Dir: repo}).Command(t.Context(), "log", "-1"); err != nil {
				t.Fatal(err)
			}
		}
		cmd.Stdout, cmd.Stderr = tty, tty
		cmd.Run()
		if through == "plain git" && !ran(marks) {
			t.Fatal("control: plain git on a terminal did not start the pager")
		}
		if through == "gitx" && ran(marks) {
			t.Fatal("git through gitx started the repository's pager")
		}
	}
}

// openPTY opens a pseudo-terminal and returns its terminal side (the
// master is drained so nothing blocks).
func openPTY(t *testing.T) *os.File {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	go io.Copy(io.Discard, m)
	return s
}

func TestEnvDropsProgramsAndConfig(t *testing.T) {
	for _, k := range []string{"GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "GIT_CONFIG_PARAMETERS", "GIT_DIR", "GIT_EXEC_PATH", "GIT_ALLOW_PROTOCOL", "GIT_CONFIG_KEY_0"} {
		t.Setenv(k, "x")
	}
	t.Setenv("GIT_CONFIG_COUNT", "1")
	env := strings.Join(gitx.Env([]string{"GIT_INDEX_FILE=/tmp/i"}), "\n") + "\n"
	for _, k := range []string{"GIT_SSH_COMMAND=", "GIT_SSH=", "GIT_EXTERNAL_DIFF=", "GIT_CONFIG_PARAMETERS=", "GIT_DIR=", "GIT_EXEC_PATH=", "GIT_ALLOW_PROTOCOL=", "GIT_CONFIG_KEY_0=", "GIT_CONFIG_COUNT="} {
		if strings.Contains("\n"+env, "\n"+k) {
			t.Errorf("%s passed to git", k)
		}
	}
	for _, kv := range []string{"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "GIT_NO_REPLACE_OBJECTS=1", "GIT_INDEX_FILE=/tmp/i"} {
		if !strings.Contains(env, kv+"\n") {
			t.Errorf("%s missing", kv)
		}
	}
}

func TestErrorCarriesStderr(t *testing.T) {
	testEnv(t)
	_, err := gitx.Run(t.Context(), t.TempDir(), "rev-parse", "--verify", "HEAD")
	var ge *gitx.Error
	if !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "not a git repository") || ge.ExitCode() <= 0 {
		t.Fatalf("err %v", err)
	}
}

func TestObjectIDAndBranch(t *testing.T) {
	sha1, sha256 := strings.Repeat("a1", 20), strings.Repeat("0f", 32)
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{sha1, true}, {sha256, true}, {strings.ToUpper(sha1), false}, {sha1[:39], false}, {sha1 + "0", false},
		{"--upload-pack=:;touch x", false}, {"HEAD", false}, {sha1[:38] + "^{", false}, {"", false},
	} {
		if got := gitx.IsObjectID(tc.s); got != tc.ok {
			t.Errorf("IsObjectID(%q) = %v", tc.s, got)
		}
		if err := gitx.ObjectID("base", tc.s); (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "base ")) {
			t.Errorf("ObjectID(%q) = %v", tc.s, err)
		}
	}
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"main", true}, {"feature/x-1", true}, {"-f", false}, {"--upload-pack=x", false}, {"a..b", false},
		{"a b", false}, {"x.lock", false}, {"x@{1}", false}, {"", false}, {".hidden", false}, {"a/", false}, {"a\nb", false},
	} {
		if err := gitx.BranchName("branch", tc.s); (err == nil) != tc.ok {
			t.Errorf("BranchName(%q) = %v", tc.s, err)
		}
	}
}

// TestDiffFamilyGetsNoExtDiff: the diff family runs with --no-ext-diff
// --no-textconv whatever the caller passed.
func TestDiffFamilyGetsNoExtDiff(t *testing.T) {
	repo, trap, marks := hostileRepo(t)
	write(t, filepath.Join(repo, ".gitattributes"), "*.txt diff=evil\n", 0o644)
	mustGit(t, repo, "config", "diff.evil.textconv", trap)
	for _, args := range [][]string{{"diff", "--textconv"}, {"log", "-p", "--textconv", "-1"}, {"show", "--ext-diff"}} {
		if out, err := gitx.Run(t.Context(), repo, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		} else if ran(marks) {
			t.Fatalf("%v ran the textconv: %s", args, out)
		}
	}
}

func TestDirs(t *testing.T) {
	testEnv(t)
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	mustGit(t, root, "init", "-q", "-b", "main", repo)
	write(t, filepath.Join(repo, "a.txt"), "a\n", 0o644)
	mustGit(t, repo, "add", "-A")
	mustGit(t, repo, "commit", "-q", "-m", "x")
	wt := filepath.Join(root, "wt")
	mustGit(t, repo, "worktree", "add", "-q", "--detach", wt)
	os.MkdirAll(filepath.Join(repo, "sub", "deeper"), 0o755)
	for _, tc := range []struct{ dir, top, gitDir, common string }{
		{filepath.Join(repo, "sub", "deeper"), repo, filepath.Join(repo, ".git"), filepath.Join(repo, ".git")},
		{wt, wt, filepath.Join(repo, ".git", "worktrees", "wt"), filepath.Join(repo, ".git")},
	} {
		top, gitDir, common, err := gitx.Dirs(tc.dir)
		if err != nil || top != tc.top || gitDir != tc.gitDir || common != tc.common {
			t.Errorf("Dirs(%s) = %s %s %s %v, want %s %s %s", tc.dir, top, gitDir, common, err, tc.top, tc.gitDir, tc.common)
		}
	}
	if _, _, _, err := gitx.Dirs(t.TempDir()); !errors.Is(err, gitx.ErrNoRepo) {
		t.Errorf("outside a repository: %v", err)
	}
}

// TestSubmoduleNeverLookedInto: a nested repository committed as a gitlink
// names a clean filter in its own configuration (which gitx's overrides,
// read from the top repository, do not see). Plain `git status` runs it
// while checking whether the submodule is dirty; status and the work-tree
// diffs through gitx never look into the submodule.
func TestSubmoduleNeverLookedInto(t *testing.T) {
	repo, trap, marks := hostileRepo(t)
	mustGit(t, repo, "commit", "-qam", "second")
	sub := filepath.Join(repo, "sub")
	mustGit(t, repo, "init", "-q", "-b", "main", "sub")
	write(t, filepath.Join(sub, ".gitattributes"), "*.txt filter=evil\n", 0o644)
	write(t, filepath.Join(sub, "s.txt"), "s\n", 0o644)
	mustGit(t, sub, "add", "-A")
	mustGit(t, sub, "commit", "-q", "-m", "sub")
	mustGit(t, repo, "add", "sub")
	mustGit(t, repo, "commit", "-q", "-m", "gitlink")
	mustGit(t, sub, "config", "filter.evil.clean", trap)
	n := 0
	dirty := func() { // same content, new mtime: git must run the filter to compare
		n++
		when := time.Date(2001, 1, 1, 0, 0, n, 0, time.UTC)
		if err := os.Chtimes(filepath.Join(sub, "s.txt"), when, when); err != nil {
			t.Fatal(err)
		}
	}
	dirty()
	mustGit(t, repo, "status", "--porcelain")
	if !ran(marks) {
		t.Fatal("control: plain git status did not run the submodule's filter: the test proves nothing")
	}
	for _, args := range [][]string{{"status", "--porcelain"}, {"diff", "--stat"}, {"diff-files"}, {"diff-index", "HEAD"}} {
		os.Remove(marks)
		dirty()
		if out, err := gitx.Run(t.Context(), repo, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		} else if ran(marks) {
			t.Errorf("%v ran the submodule's clean filter: %s", args, out)
		}
	}
}

// TestNoUserConfig: with NoUserConfig git reads neither the user's global
// configuration nor the system's, whatever the caller's environment or
// Env names; without it the user's stays.
func TestNoUserConfig(t *testing.T) {
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, "[brood]\n\tprobe = from-global\n", 0o644)
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	dir := t.TempDir()
	for _, tc := range []struct {
		cmd  gitx.Cmd
		want string
	}{
		{gitx.Cmd{Dir: dir}, "from-global"},
		{gitx.Cmd{Dir: dir, NoUserConfig: true}, ""},
		{gitx.Cmd{Dir: dir, NoUserConfig: true, Env: []string{"GIT_CONFIG_GLOBAL=" + global, "GIT_CONFIG_NOSYSTEM=0"}}, ""},
	} {
		got, _ := tc.cmd.Line(t.Context(), "config", "--get", "brood.probe")
		if got != tc.want {
			t.Errorf("%+v: brood.probe = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}
