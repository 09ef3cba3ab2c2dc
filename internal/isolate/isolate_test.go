//go:build linux

package isolate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/sandbox"
)

// The test binary doubles as the child: with childScript set it enters its
// isolation (and, with childConfine, its Landlock sandbox) and runs the
// script with bash.
const (
	childScript  = "ISOLATE_TEST_SCRIPT"
	childConfine = "ISOLATE_TEST_CONFINE" // JSON list of extra writable dirs
)

// spawnExitEnv makes the test binary exit 0 right after EnterFromEnv: a
// process that only starts, enters its view and ends
// (BenchmarkReadOnlyViewSpawn).
const spawnExitEnv = "ISOLATE_SPAWN_EXIT"

func TestMain(m *testing.M) {
	if os.Getenv(benchHelperEnv) != "" {
		os.Exit(benchHelper())
	}
	if envelope := os.Getenv(restrictChildEnv); envelope != "" {
		os.Exit(restrictChildHelper(envelope))
	}
	ent, err := EnterFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "enter:", err)
		if code := ExitCode(err); code != 1 {
			os.Exit(code)
		}
		os.Exit(90)
	}
	if os.Getenv(spawnExitEnv) != "" {
		os.Exit(0)
	}
	if script, ok := os.LookupEnv(childScript); ok {
		os.Exit(runChild(ent, script))
	}
	os.Exit(m.Run())
}

func runChild(ent Entered, script string) int {
	if conf, ok := os.LookupEnv(childConfine); ok {
		var extra []string
		if err := json.Unmarshal([]byte(conf), &extra); err != nil {
			return 91
		}
		st, err := sandbox.Restrict(sandbox.Policy{Writable: append(extra, ent.Root), Network: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, "restrict:", err)
			return 92
		}
		fmt.Fprintln(os.Stderr, "sandbox:", st)
	}
	cmd := exec.Command("bash", "-euc", script)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "ENTERED_MODE="+string(ent.Mode), "ENTERED_ROOT="+ent.Root)
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 93
	}
	return 0
}

// testIsolator probes once per test binary run: it is a value passed around,
// not package state.
func testIsolator(t testing.TB) *Isolator {
	t.Helper()
	return New(context.Background())
}

type mode struct {
	name  string
	force bool
}

func modes(t *testing.T, iso *Isolator) []mode {
	ms := []mode{{"worktree", true}}
	if iso.Support().Overlay {
		ms = append([]mode{{"overlay", false}}, ms...)
	} else {
		t.Logf("overlay unavailable here (%s): only the worktree fallback runs", iso.Support().Why)
	}
	return ms
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

func lines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s%d\n", prefix, i)
	}
	return b.String()
}

// newRepo makes a repository with committed, dirty, untracked, staged and
// ignored files.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, ".gitignore"), ".env\nnode_modules/\n.brood/\n")
	write(t, filepath.Join(dir, "a.txt"), lines("a", 10))
	write(t, filepath.Join(dir, "sub/b.txt"), lines("b", 10))
	write(t, filepath.Join(dir, "del.txt"), "delete me\n")
	write(t, filepath.Join(dir, "dir/x.txt"), "x\n")
	write(t, filepath.Join(dir, "dir/y.txt"), "y\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "init")
	write(t, filepath.Join(dir, "a.txt"), strings.Replace(lines("a", 10), "a1\n", "a1 dirty\n", 1))
	write(t, filepath.Join(dir, "u.txt"), "untracked\n")
	write(t, filepath.Join(dir, "staged.txt"), "staged\n")
	git(t, dir, "add", "staged.txt")
	write(t, filepath.Join(dir, ".env"), "secret\n")
	write(t, filepath.Join(dir, "node_modules/m.js"), "m\n")
	return dir
}

// runChild starts the test binary as an isolated child running script and
// waits for it.
func startChild(t *testing.T, ws *Workspace, script string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childScript+"="+script)
	cmd.Env = append(cmd.Env, env...)
	if err := ws.Configure(cmd); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("child output:\n%s", out.String())
		}
	})
	return cmd
}

func runIsolated(t *testing.T, ws *Workspace, script string, env ...string) {
	t.Helper()
	if err := startChild(t, ws, script, env...).Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
}

func prepare(t *testing.T, iso *Isolator, dir, id string, force bool) *Workspace {
	t.Helper()
	state := filepath.Join(dir, ".brood", "dispatch", id)
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := iso.Prepare(context.Background(), Options{Dir: dir, ID: id, StateDir: state, ForceWorktree: force})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Cleanup(context.Background()) })
	return ws
}

func TestIsolatedWriterChangeSet(t *testing.T) {
	iso := testIsolator(t)
	for _, m := range modes(t, iso) {
		t.Run(m.name, func(t *testing.T) {
			dir := newRepo(t)
			indexBefore := read(t, filepath.Join(dir, ".git", "index"))
			headBefore := git(t, dir, "rev-parse", "HEAD")
			ws := prepare(t, iso, dir, "t1", m.force)
			if string(ws.Mode) != m.name {
				t.Fatalf("mode %s, want %s (note %q)", ws.Mode, m.name, ws.Note)
			}
			seesIgnored := "test ! -e .env" // neither copy shows ignored files
			runIsolated(t, ws, `
test "$ENTERED_MODE" = `+m.name+`
grep -q 'a1 dirty' a.txt          # uncommitted state is there
grep -q untracked u.txt           # untracked too
grep -q staged staged.txt
`+seesIgnored+`
sed -i 's/^a5$/a5 child/' a.txt
echo new > new.txt
rm del.txt
rm -r dir && mkdir dir && echo z > dir/z.txt   # opaque directory
mkdir -p deep/er && echo d > deep/er/f.txt
mkdir -p node_modules && echo m2 > node_modules/m.js && echo n > node_modules/new.js
echo secret2 > .env
git add -A && git -c user.name=c -c user.email=c@c commit -qm child
echo done > "$STATE/child-result"
`, "STATE="+filepath.Join(dir, ".brood/dispatch/t1"))
			if ws.Mode == ModeOverlay {
				// Until Finish, the parent's tree has none of it.
				if strings.Contains(read(t, filepath.Join(dir, "a.txt")), "a5 child") || read(t, filepath.Join(dir, "new.txt")) != "<missing>" {
					t.Fatal("overlay child wrote through to the parent's tree")
				}
			}
			if got := read(t, filepath.Join(dir, ".brood/dispatch/t1/child-result")); got != "done\n" {
				t.Errorf("state dir write did not reach the real directory: %q", got)
			}
			out, err := ws.Finish(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !out.Applied || out.Conflict != "" {
				t.Fatalf("outcome %+v", out)
			}
			slices.Sort(out.Files)
			want := []string{"a.txt", "deep/er/f.txt", "del.txt", "dir/x.txt", "dir/y.txt", "dir/z.txt", "new.txt"}
			if !slices.Equal(out.Files, want) {
				t.Errorf("files %v, want %v", out.Files, want)
			}
			checks := map[string]string{
				"a.txt":               strings.Replace(strings.Replace(lines("a", 10), "a1\n", "a1 dirty\n", 1), "a5\n", "a5 child\n", 1),
				"new.txt":             "new\n",
				"del.txt":             "<missing>",
				"dir/x.txt":           "<missing>",
				"dir/z.txt":           "z\n",
				"deep/er/f.txt":       "d\n",
				".env":                "secret\n",
				"node_modules/m.js":   "m\n",
				"node_modules/new.js": "<missing>",
				"staged.txt":          "staged\n",
			}
			for p, wantContent := range checks {
				if got := read(t, filepath.Join(dir, p)); got != wantContent {
					t.Errorf("%s = %q, want %q", p, got, wantContent)
				}
			}
			if read(t, filepath.Join(dir, ".git", "index")) != indexBefore {
				t.Error("the parent's index changed: apply-back must never stage")
			}
			if git(t, dir, "rev-parse", "HEAD") != headBefore {
				t.Error("the child's commit reached the parent's HEAD")
			}
			if err := ws.Cleanup(context.Background()); err != nil {
				t.Fatal(err)
			}
			if ws.Mode == ModeWorktree {
				if _, err := os.Stat(ws.Root); !os.IsNotExist(err) {
					t.Errorf("worktree %s not removed: %v", ws.Root, err)
				}
			}
		})
	}
}

func TestParallelWriters(t *testing.T) {
	iso := testIsolator(t)
	tests := []struct {
		name         string
		scriptA      string
		scriptB      string
		wantConflict bool
	}{
		{"disjoint edits both land", `sed -i 's/^a3$/a3 A/' a.txt`, `sed -i 's/^b3$/b3 B/' sub/b.txt; echo b > fromB.txt`, false},
		{"same line: second conflicts", `sed -i 's/^a3$/a3 A/' a.txt`, `sed -i 's/^a3$/a3 B/' a.txt`, true},
	}
	for _, m := range modes(t, iso) {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				dir := newRepo(t)
				indexBefore := read(t, filepath.Join(dir, ".git", "index"))
				wa := prepare(t, iso, dir, "A", m.force)
				wb := prepare(t, iso, dir, "B", m.force)
				ca, cb := startChild(t, wa, tt.scriptA), startChild(t, wb, tt.scriptB)
				if err := errors.Join(ca.Wait(), cb.Wait()); err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				outs := make([]*Outcome, 2)
				errs := make([]error, 2)
				for i, ws := range []*Workspace{wa, wb} {
					wg.Go(func() { outs[i], errs[i] = ws.Finish(context.Background()) })
				}
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatal(err)
				}
				a := read(t, filepath.Join(dir, "a.txt"))
				if !tt.wantConflict {
					if !outs[0].Applied || !outs[1].Applied {
						t.Fatalf("outcomes %+v %+v", outs[0], outs[1])
					}
					if !strings.Contains(a, "a3 A") || !strings.Contains(read(t, filepath.Join(dir, "sub/b.txt")), "b3 B") || read(t, filepath.Join(dir, "fromB.txt")) != "b\n" {
						t.Errorf("not both landed: a.txt=%q", a)
					}
				} else {
					if outs[0].Applied == outs[1].Applied {
						t.Fatalf("want exactly one applied: %+v %+v", outs[0], outs[1])
					}
					winner, loser, ws := "A", outs[1], wb
					if outs[1].Applied {
						winner, loser, ws = "B", outs[0], wa
					}
					if !strings.Contains(a, "a3 "+winner) || strings.Count(a, "a3 ") != 1 {
						t.Errorf("a.txt = %q, want only %s's change", a, winner)
					}
					if loser.Conflict == "" || loser.KeptAt == "" || read(t, loser.Patch) == "<missing>" {
						t.Fatalf("loser outcome %+v", loser)
					}
					if err := ws.Cleanup(context.Background()); err != nil {
						t.Fatal(err)
					}
					if !strings.Contains(read(t, filepath.Join(loser.KeptAt, "a.txt")), "a3 ") {
						t.Errorf("kept copy at %s lacks the child's a.txt", loser.KeptAt)
					}
				}
				if read(t, filepath.Join(dir, ".git", "index")) != indexBefore {
					t.Error("index changed")
				}
			})
		}
	}
}

func TestParentEditsMeanwhile(t *testing.T) {
	iso := testIsolator(t)
	for _, m := range modes(t, iso) {
		for _, sameLine := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/sameLine=%v", m.name, sameLine), func(t *testing.T) {
				dir := newRepo(t)
				ws := prepare(t, iso, dir, "P", m.force)
				if _, err := ws.snap.wait(); err != nil { // the spawn snapshot exists
					t.Fatal(err)
				}
				parentLine := "a2" // outside the child's hunk and its context
				if sameLine {
					parentLine = "a7"
				}
				write(t, filepath.Join(dir, "a.txt"), strings.Replace(read(t, filepath.Join(dir, "a.txt")), parentLine+"\n", parentLine+" parent\n", 1))
				runIsolated(t, ws, `sed -i 's/^a7.*$/a7 child/' a.txt`)
				out, err := ws.Finish(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if out.Applied == sameLine {
					t.Fatalf("sameLine=%v but outcome %+v", sameLine, out)
				}
				a := read(t, filepath.Join(dir, "a.txt"))
				if !strings.Contains(a, parentLine+" parent") {
					t.Errorf("the parent's edit was lost: %q", a)
				}
			})
		}
	}
}

func TestWithoutRepository(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		support Support
		note    string
	}{
		{"not a repository", Support{Git: "git version x", Worktree: true, Overlay: true}, "not a git repository"},
		{"no git", Support{}, "git not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := NewWithSupport(tt.support).Prepare(context.Background(), Options{Dir: dir, ID: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if ws.Mode != ModeNone || ws.Dir != dir || !strings.Contains(ws.Note, tt.note) {
				t.Fatalf("workspace %+v", ws)
			}
			runIsolated(t, ws, `echo here > inplace.txt`)
			out, err := ws.Finish(context.Background())
			if err != nil || out.Applied || !strings.Contains(out.Note, tt.note) {
				t.Fatalf("outcome %+v %v", out, err)
			}
			if read(t, filepath.Join(dir, "inplace.txt")) != "here\n" {
				t.Error("child did not run in place")
			}
		})
	}
}

func TestOverlayUnavailableFallsBack(t *testing.T) {
	s := testIsolator(t).Support()
	s.Overlay = false
	dir := newRepo(t)
	ws := prepare(t, NewWithSupport(s), dir, "F", false)
	if ws.Mode != ModeWorktree || !strings.HasPrefix(ws.Root, filepath.Join(dir, ".git", "brood-worktrees")) {
		t.Fatalf("workspace %+v", ws)
	}
	if got := git(t, dir, "status", "--porcelain", "--", ".git"); got != "" {
		t.Errorf("worktree visible in status: %q", got)
	}
}

// TestConfinedOverlayChild checks containment: a child that is isolated
// and confined by Landlock can write its copy and its state directory, and
// nothing else; in particular it cannot unmount the overlay to reach the
// real tree.
func TestConfinedOverlayChild(t *testing.T) {
	iso := testIsolator(t)
	if !iso.Support().Overlay || !sandbox.Probe(context.Background()).HoldsBashReadOnly() {
		t.Skip("needs overlay and Landlock; the sandbox and worktree tests cover each alone")
	}
	dir := newRepo(t)
	outside := t.TempDir()
	ws := prepare(t, iso, dir, "C", false)
	state := filepath.Join(dir, ".brood", "dispatch", "C")
	conf, _ := json.Marshal([]string{state})
	runIsolated(t, ws, `
test "$ENTERED_MODE" = overlay && test "$ENTERED_ROOT" = `+dir+`   # survives the sandbox's re-exec
echo mine > a.txt
echo r > .brood/dispatch/C/r
if echo x > `+outside+`/escape 2>/dev/null; then exit 10; fi
if umount `+dir+` 2>/dev/null; then exit 11; fi
if echo x > /proc/$PARENT_PID/root`+dir+`/a.txt 2>/dev/null; then exit 12; fi
test "$(cat /proc/$PARENT_PID/root`+dir+`/a.txt)" != mine    # the real tree is readable, unchanged
`, childConfine+"="+string(conf), fmt.Sprint("PARENT_PID=", os.Getpid()))
	if read(t, filepath.Join(outside, "escape")) != "<missing>" {
		t.Fatal("confined child wrote outside its copy")
	}
	if read(t, filepath.Join(dir, "a.txt")) == "mine\n" {
		t.Fatal("confined child wrote the parent's tree directly")
	}
	out, err := ws.Finish(context.Background())
	if err != nil || !out.Applied || read(t, filepath.Join(dir, "a.txt")) != "mine\n" {
		t.Fatalf("apply-back: %+v %v", out, err)
	}
}

// TestSubdirectory checks that a child started from a subdirectory of the
// repository gets the whole tree and starts in the same relative place.
func TestSubdirectory(t *testing.T) {
	iso := testIsolator(t)
	for _, m := range modes(t, iso) {
		t.Run(m.name, func(t *testing.T) {
			dir := newRepo(t)
			state := t.TempDir()
			ws, err := iso.Prepare(context.Background(), Options{Dir: filepath.Join(dir, "sub"), ID: "S", StateDir: state, ForceWorktree: m.force})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Cleanup(context.Background())
			runIsolated(t, ws, `
test "$(basename "$PWD")" = sub
echo b1 > b.txt
echo top >> ../a.txt`)
			out, err := ws.Finish(context.Background())
			if err != nil || !out.Applied {
				t.Fatalf("%+v %v", out, err)
			}
			if read(t, filepath.Join(dir, "sub/b.txt")) != "b1\n" || !strings.HasSuffix(read(t, filepath.Join(dir, "a.txt")), "top\n") {
				t.Error("changes from a subdirectory did not land")
			}
		})
	}
}

// TestSnapshotForgetsNewlyIgnoredFiles: a file untracked at one snapshot and
// ignored by the next is not in the next snapshot (the cached index must not
// carry it into a child's copy).
func TestSnapshotForgetsNewlyIgnoredFiles(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("init", "-q")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	run("add", "a.txt")
	run("commit", "-qm", "init")
	os.WriteFile(filepath.Join(dir, "creds.json"), []byte("secret\n"), 0o644)
	ctx := context.Background()
	r, err := openRepo(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	first, err := takeSnapshot(ctx, r, filepath.Join(t.TempDir(), "i1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run("ls-tree", "-r", "--name-only", first), "creds.json") {
		t.Fatal("the scenario needs creds.json in the first snapshot")
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("creds.json\n"), 0o644)
	second, err := takeSnapshot(ctx, r, filepath.Join(t.TempDir(), "i2"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(run("ls-tree", "-r", "--name-only", second), "creds.json") {
		t.Fatal("a file ignored since the last snapshot is still in the snapshot")
	}
}

// TestDropFilesWithTypeChange: a file turned into a link is one change but
// two patch sections; dropping an ignored file must keep both.
func TestDropFilesWithTypeChange(t *testing.T) {
	patch := "diff --git a/u.txt b/u.txt\ndeleted file mode 100644\n--- a/u.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-u\n" +
		"diff --git a/u.txt b/u.txt\nnew file mode 120000\n--- /dev/null\n+++ b/u.txt\n@@ -0,0 +1 @@\n+a.txt\n\\ No newline at end of file\n" +
		"diff --git a/.env2 b/.env2\nnew file mode 100644\n--- /dev/null\n+++ b/.env2\n@@ -0,0 +1 @@\n+secret\n" +
		"diff --git \"a/sp ace\\tx\" \"b/sp ace\\tx\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/sp ace\\tx\"\n@@ -0,0 +1 @@\n+x\n"
	entries := []rawEntry{{path: "u.txt"}, {path: ".env2"}, {path: "sp ace\tx"}}
	out, kept, err := dropFiles([]byte(patch), entries, map[string]bool{".env2": true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(out), "diff --git a/u.txt") != 2 || strings.Contains(string(out), ".env2") || !strings.Contains(string(out), "sp ace") {
		t.Fatalf("patch after dropping .env2:\n%s", out)
	}
	if len(kept) != 2 || kept[0].path != "u.txt" || kept[1].path != "sp ace\tx" {
		t.Fatalf("kept %+v", kept)
	}
}

// TestWorktreesPreparedTogether: writers dispatched together get their
// worktrees at the same moment. Concurrent `git worktree add` in one
// repository reads the half-made admin directory of another
// ("failed to read .git/worktrees/X/commondir") and fails, so Prepare
// serialises them.
func TestWorktreesPreparedTogether(t *testing.T) {
	iso := testIsolator(t)
	dir := newRepo(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	wss := make([]*Workspace, n)
	for i := range n {
		id := fmt.Sprintf("W%d", i)
		state := filepath.Join(dir, ".brood", "dispatch", id)
		if err := os.MkdirAll(state, 0o755); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			wss[i], errs[i] = iso.Prepare(context.Background(), Options{Dir: dir, ID: id, StateDir: state, ForceWorktree: true})
		})
	}
	wg.Wait()
	for i, ws := range wss {
		if ws != nil {
			t.Cleanup(func() { ws.Cleanup(context.Background()) })
		}
		if errs[i] != nil {
			t.Errorf("writer %d: %v", i, errs[i])
		} else if ws.Mode != ModeWorktree {
			t.Errorf("writer %d: mode %s", i, ws.Mode)
		}
	}
	// And removed together.
	errs = make([]error, n)
	for i, ws := range wss {
		if ws != nil {
			wg.Go(func() { errs[i] = ws.Cleanup(context.Background()) })
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
}
