package attack_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/session"
)

// needLandlock skips where the kernel has no Landlock: there an in-place
// writer is not confined and says so (its envelope's note), which
// TestEveryClassConfined's table reports.
func needLandlock(t *testing.T) {
	t.Helper()
	if sandbox.LandlockABI() < 1 {
		t.Skip("no Landlock on this kernel: an in-place writer runs unconfined there, and its result says so")
	}
}

// TestInPlaceWriterConfined (issue 23, the root cause): a writer that works
// in place (the default for a lone writer) writes the work tree and a
// commit, its TMPDIR and the build cache, and nothing else: not .git/config
// or .git/hooks (what the parent's git would run), not brood's or Claude
// Code's configuration, not the parent's records, not another task's
// directory, not $HOME/.bashrc, not brood's remembered verdict on the lean
// child binary (~/.cache/brood/lean); it cannot move .git or .brood away to
// put its own in their place.
func TestInPlaceWriterConfined(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{
		"README.md":             "# Sample\n",
		".claude/settings.json": "{}\n",
	})
	writeFile(t, filepath.Join(p.home, ".bashrc"), "# the user's\n")
	// The lean binary's remembered verdict (childexe): no child may forge it.
	leanVerdict := filepath.Join(p.home, ".cache", "brood", "lean", "0123456789abcdef0123456789abcdef.json")
	writeFile(t, leanVerdict, "{}\n")
	// Another task, with a directory of its own.
	other := p.script("other.yaml", "agents:\n  explore:\n    - say: \"looked\"\n")
	if code, out, errs := p.brood(t.Context(), nil, "subagent", "--model", other, "explore", "look"); code != 0 {
		t.Fatalf("first task: code %d\n%s\n%s", code, out, errs)
	}
	otherID := p.onlyTaskID()
	otherResult := filepath.Join(p.root, ".brood", "dispatch", otherID, "result.json")
	before := map[string]string{}
	targets := []string{
		// (.git/commondir and .git/config.worktree, names a git directory
		// does not have until someone makes them, are beside index.lock,
		// which a commit makes: no kernel rule tells them apart. The
		// parent removes them after the child: below.)
		".git/config", ".git/hooks/pre-commit", ".git/info/exclude",
		".brood/settings.toml", ".brood/settings.local.toml", ".brood/records/" + otherID + ".json",
		".brood/records/hooks/" + otherID + ".9.stop", ".claude/settings.json", ".claude/agents/evil.md",
		otherResult, filepath.Join(p.home, ".bashrc"), leanVerdict,
	}
	for _, f := range targets {
		if !filepath.IsAbs(f) {
			f = filepath.Join(p.root, f)
		}
		b, _ := os.ReadFile(f)
		before[f] = string(b)
	}
	var try strings.Builder
	for f := range before {
		// (The path goes through a variable: the tool layer's own guard
		// refuses a literal one up front, and this test is about the
		// kernel's wall behind it.)
		fmt.Fprintf(&try, "f=%q; (printf 'PWNED\\n' >> \"$f\") 2>/dev/null && echo \"WROTE %s\"; ", f, f)
	}
	for _, d := range []string{".git", ".brood", ".claude"} {
		fmt.Fprintf(&try, "d=%s; mv \"$d\" \"$d.moved\" 2>/dev/null && echo \"MOVED %s\"; ", d, d)
	}
	mdl := p.script("inplace.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: inplace, prompt: "go"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: "{ `+strings.ReplaceAll(try.String(), `"`, `\"`)+` echo tried; } > tried.txt"}
    - tools:
        - Bash: {command: "echo work > work.txt && git add work.txt && git -c user.email=c@x -c user.name=c commit -qm child && echo committed > committed.txt; echo t > \"$TMPDIR/t\" && echo tmp >> committed.txt; echo c > \"$GOCACHE/probe\" && test \"$GOCACHE\" != \"$HOME/.cache/go-build\" && echo cache >> committed.txt; mkdir -p \"$HOME/.cache/go-build\" 2>/dev/null; echo c > \"$HOME/.cache/go-build/probe\" 2>/dev/null && echo users-cache >> committed.txt"}
    - tools:
        - Bash: {command: "f=.git/commondir; printf 'PWNED\\n' > \"$f\" && echo made-commondir"}
    - say: "child done"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(p.root, "tried.txt")); err != nil {
		t.Fatalf("the child never tried (no tried.txt: %v): the test did not reach its scenario\n%s", err, errs)
	}
	// .git/commondir, which the kernel cannot hold (see targets), is
	// removed by the parent after the child and named in its result.
	if _, err := os.Lstat(filepath.Join(p.root, ".git", "commondir")); err == nil {
		t.Errorf("the child's .git/commondir is still there")
	}
	var taskOut string
	for _, r := range p.rootTranscript() {
		if r.Type == session.RecToolResult && r.Tool == "Task" {
			taskOut = r.Output
		}
	}
	if !strings.Contains(taskOut, "Configuration: the child made") || !strings.Contains(taskOut, "commondir") {
		t.Errorf("the result does not name the removed .git/commondir:\n%s", taskOut)
	}
	// What the child itself saw succeed (a guard that puts a file back
	// afterwards does not count), and what is left.
	tried, _ := os.ReadFile(filepath.Join(p.root, "tried.txt"))
	for _, l := range strings.Split(string(tried), "\n") {
		if strings.HasPrefix(l, "WROTE") || strings.HasPrefix(l, "MOVED") {
			t.Errorf("the in-place writer %s", strings.ToLower(l))
		}
	}
	for f, was := range before {
		if b, _ := os.ReadFile(f); string(b) != was {
			t.Errorf("%s changed: %q -> %q", f, was, b)
		}
	}
	b, _ := os.ReadFile(filepath.Join(p.root, "committed.txt"))
	if got := strings.Fields(string(b)); strings.Join(got, " ") != "committed tmp cache" {
		t.Errorf("what an in-place writer needs did not work (committed.txt %q; want committed, tmp, cache: its own GOCACHE written, never the user's)\n%s", b, errs)
	}
	if log := p.git("log", "--format=%s", "-1"); strings.TrimSpace(log) != "child" {
		t.Errorf("the child's commit is not there: last commit %q", log)
	}
}

// cgroupEscape writes its pid into the cgroup.procs of every cgroup above
// its own on every cgroup2 mount (and the v1 roots), says where that
// worked in moved.txt, then sleeps for $1 seconds.
const cgroupEscape = `cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
for m in $(awk '$3=="cgroup2"{print $2}' /proc/mounts); do
  d="$cg"
  while :; do
    echo $$ > "$m$d/cgroup.procs" 2>/dev/null && echo "$m$d" >> moved.txt
    { [ "$d" = / ] || [ -z "$d" ]; } && break
    d=$(dirname "$d")
  done
done
for m in /sys/fs/cgroup/pids /sys/fs/cgroup/memory /sys/fs/cgroup/systemd; do
  echo $$ > $m/cgroup.procs 2>/dev/null && echo "$m" >> movedv1.txt
done
echo $$ > escaped
exec sleep "$1"
`

// TestInPlaceCannotLeaveItsCgroup (issue 23 case 6): an in-place writer's
// grandchild leaves the session with setsid and writes its pid into every
// cgroup.procs it can find above its own; none takes it, and it does not
// outlive the run.
func TestInPlaceCannotLeaveItsCgroup(t *testing.T) {
	needLandlock(t)
	for _, c := range containments {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"escape.sh": cgroupEscape})
			dur := uniqueSleep()
			mdl := p.script("cg.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: escape, prompt: "escape"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: "setsid -f sh escape.sh `+dur+`; for i in $(seq 400); do [ -s escaped ] && break; sleep 0.05; done; echo left"}
    - say: "child done"
`)
			code, out, errs := p.brood(t.Context(), []string{c.env}, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			if b, err := os.ReadFile(filepath.Join(p.root, "escaped")); err != nil || len(strings.TrimSpace(string(b))) == 0 {
				t.Fatalf("the grandchild never ran (no escaped: %v)\n%s", err, errs)
			}
			if b, err := os.ReadFile(filepath.Join(p.root, "moved.txt")); err == nil {
				t.Errorf("the grandchild moved itself into cgroups: %s", b)
			}
			if left := liveWith(dur); len(left) > 0 {
				for _, pid := range left {
					syscall.Kill(pid, syscall.SIGKILL)
				}
				t.Fatalf("the grandchild %v outlived the run (containment %s)", left, c.name)
			}
		})
	}
}

// TestInPlaceCannotForgeStopMarkers (issue 23 case 7): an in-place writer
// makes its own task's stop markers before its parent does, to suppress
// the user's SubagentStop audit hook. The hook still fires exactly once.
func TestInPlaceCannotForgeStopMarkers(t *testing.T) {
	needLandlock(t)
	p := newProject(t, nil)
	log := filepath.Join(t.TempDir(), "hooks.log")
	hook := `[{"hooks":[{"type":"command","command":"cat >> ` + log + `; echo >> ` + log + `"}]}]`
	writeFile(t, filepath.Join(p.home, ".claude", "settings.json"), `{"hooks":{"SubagentStart":`+hook+`,"SubagentStop":`+hook+`}}`)
	p.childBash("forge", "id=$(basename $(dirname $TMPDIR)); mkdir -p .brood/records/hooks 2>/dev/null; for n in 0 1 2 3; do touch .brood/records/hooks/$id.$n.stop 2>/dev/null && echo forged $n; done; echo tried > tried.txt")
	data, _ := os.ReadFile(log)
	starts, stops := strings.Count(string(data), `"SubagentStart"`), strings.Count(string(data), `"SubagentStop"`)
	if starts != 1 || stops != 1 {
		t.Errorf("SubagentStart fired %d times and SubagentStop %d, want exactly one each:\n%s", starts, stops, data)
	}
}

// TestWorktreeCopyHidesIgnored (issue 23 case 8): with the git worktree
// fallback, an isolated child reads the real repository's ignored .env by
// its absolute path and copies it into its copy, whose patch comes back.
// The read is refused as the overlay's whiteout refuses it.
func TestWorktreeCopyHidesIgnored(t *testing.T) {
	needLandlock(t)
	const secret = "hunter2-not-for-children"
	p := newProject(t, map[string]string{".gitignore": ".env\nsecrets/\n", "README.md": "# r\n"})
	writeFile(t, filepath.Join(p.root, ".env"), "TOKEN="+secret+"\n")
	writeFile(t, filepath.Join(p.root, "secrets", "key"), secret+"\n")
	writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
		"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
	mdl := p.script("env.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: iso, description: steal, prompt: "steal"}
    - say: "root done"
  iso:
    - tools:
        - Bash: {command: "cp `+p.root+`/.env stolen-env.txt; cp `+p.root+`/secrets/key stolen-key.txt; echo tried > tried.txt"}
    - say: "child done"
`)
	code, out, errs := p.brood(t.Context(), []string{"BROOD_FORCE_WORKTREE=1"}, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(p.root, "tried.txt")); err != nil {
		t.Fatalf("the isolated child's patch did not come back (no tried.txt: %v)\n%s\n%s", err, out, errs)
	}
	for _, f := range []string{"stolen-env.txt", "stolen-key.txt"} {
		if b, err := os.ReadFile(filepath.Join(p.root, f)); err == nil && strings.Contains(string(b), secret) {
			t.Errorf("the worktree child read the real repository's ignored file: %s holds %q", f, b)
		}
	}
}
