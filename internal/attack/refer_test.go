package attack_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/session"
)

// moveProbe is what a child tries with its files: `git mv` and `ln`
// between two directories of its tree, a rename between two of its
// TMPDIR, a link and a rename out of a credential store no child reads,
// and a link and a rename into HOME, which no child writes (and, for an
// in-place writer, a link into .git/hooks, bound read-only in its view).
// Its markers are made when it runs ($ok, $no), so that the command's own
// text, which a refusal quotes, never holds them.
const moveProbe = `ok=OK; no=DONE
git mv a/x b/x 2>&1 && echo GIT-MV-$ok; ln a/y b/y 2>&1 && echo LN-$ok
mkdir -p $TMPDIR/p $TMPDIR/q && echo t > $TMPDIR/p/f && mv $TMPDIR/p/f $TMPDIR/q/f 2>&1 && echo TMP-MV-$ok
ln $HOME/.ssh/id_probe stolen 2>&1 && echo HIDDEN-LINKED-$no; mv $HOME/.ssh/id_probe stolen2 2>&1 && echo HIDDEN-MOVED-$no
ln a/y $HOME/linked-out 2>&1 && echo INTO-READONLY-$no; mv README.md $HOME/moved-out 2>&1 && echo INTO-READONLY-$no
if [ -n "$HOOKS" ]; then h=hooks; ln a/y .git/$h/pre-commit 2>&1 && echo INTO-READONLY-$no; fi
echo probed`

// tmpTools is what a read-only child's tools do in its TMPDIR, which its
// base domain keeps from moving a file between two directories: a git
// repository made, added to and committed to, and a Go package built and
// vetted with its build cache there (a library with no import: a program,
// or go test, would build the runtime into the empty cache first, a
// minute under load; both work there too).
const tmpTools = `ok=OK
(cd $TMPDIR && git init -q r && cd r && echo x > f && git add f && git -c user.name=p -c user.email=p@p.invalid commit -qm m 2>&1 && echo GIT-TMP-$ok)
(mkdir -p $TMPDIR/m && cd $TMPDIR/m && printf 'module m\n\ngo 1.21\n' > go.mod && printf 'package m\n\nfunc M() int { return 1 }\n' > m.go &&
 export GOCACHE=$TMPDIR/gocache GOTOOLCHAIN=local GOFLAGS= && go build . 2>&1 && go vet . 2>&1 && echo GO-TMP-$ok)`

// TestEveryClassMovesItsOwnFiles (review22 P2-2): every writer (in place,
// on an overlay, in a git worktree) links and renames files between its
// own directories (`+"`git mv a/x b/x`"+`, but in a worktree, and `+"`ln a/y b/y`"+`)
// and between two directories of its TMPDIR: the writers that mount first
// (in place, overlay) got EXDEV for all of it from the Landlock base
// domain they were started in. A read-only child, still on its base,
// moves nothing in the tree (EACCES or EROFS, not EXDEV), and git and go
// work in its TMPDIR. No class moves or links a file out of a credential
// store it may not read, or into HOME, or (in place) into .git/hooks.
func TestEveryClassMovesItsOwnFiles(t *testing.T) {
	needLandlock(t)
	if sandbox.LandlockABI() < 2 {
		t.Skip("Landlock ABI 1: no REFER right, every confined child's move between directories is EXDEV (docs/trust.md)")
	}
	for _, c := range childClasses {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# r\n", "a/x": "x\n", "a/y": "y\n", "b/keep": "k\n"})
			secret := filepath.Join(p.home, ".ssh", "id_probe")
			writeFile(t, secret, "PROBE-SECRET\n")
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
				"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
			cmd := moveProbe
			if c.name == "in-place writer" {
				cmd = "HOOKS=1\n" + cmd
			}
			readOnly := c.agent == "explore"
			if readOnly {
				cmd = tmpTools + "\n" + cmd
			}
			res := probeChild(t, p, c.agent, c.env, cmd)
			moves := []string{"GIT-MV-OK", "LN-OK"}
			if strings.Contains(res, "Isolation: worktree copy") {
				// (Forced, or where no overlay can be mounted.) A
				// worktree copy's index is in the real .git
				// (worktrees/<id>/), outside what it writes: its git mv
				// fails before any rename (docs/trust.md, Limits).
				moves = moves[1:]
			}
			for _, w := range moves {
				if got := strings.Contains(res, w); got == readOnly {
					t.Errorf("%s: %s printed %v, want %v:\n%s", c.name, w, got, !readOnly, res)
				}
			}
			// A read-only child's base domain refuses it (docs/trust.md,
			// Limits); what its tools do in TMPDIR still works.
			if !readOnly && !strings.Contains(res, "TMP-MV-OK") {
				t.Errorf("%s: no rename between two directories of its TMPDIR:\n%s", c.name, res)
			}
			for _, w := range []string{"GIT-TMP-OK", "GO-TMP-OK"} {
				if readOnly && !strings.Contains(res, w) {
					t.Errorf("%s: no %s: its tools fail in its TMPDIR:\n%s", c.name, w, res)
				}
			}
			if readOnly && (strings.Contains(res, "cross-device") || !strings.Contains(res, "ln: failed to create hard link 'b/y'")) {
				t.Errorf("%s: the tree's link failed otherwise than with EACCES or EROFS:\n%s", c.name, res)
			}
			for _, bad := range []string{"HIDDEN-LINKED-DONE", "HIDDEN-MOVED-DONE", "INTO-READONLY-DONE"} {
				if strings.Contains(res, bad) {
					t.Errorf("%s: %s:\n%s", c.name, bad, res)
				}
			}
			if b, err := os.ReadFile(secret); err != nil || string(b) != "PROBE-SECRET\n" {
				t.Errorf("%s: the credential file moved: %q, %v", c.name, b, err)
			}
			for _, f := range []string{"linked-out", "moved-out"} {
				if _, err := os.Lstat(filepath.Join(p.home, f)); err == nil {
					t.Errorf("%s: %s landed in HOME", c.name, f)
				}
			}
		})
	}
}

// probeChild runs one child of agent (with env) through `brood run`,
// which runs cmd with Bash and says what it printed, and returns that (the
// Task result the root got). It fails t unless the command ran to its end
// ("probed").
func probeChild(t *testing.T, p *project, agent string, env []string, cmd string) string {
	t.Helper()
	mdl := p.script("probe.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: `+agent+`, description: probe, prompt: "probe"}
    - say: "root done"
  `+agent+`:
    - tools:
        - Bash: {command: `+strconv.Quote(cmd)+`}
    - say: "PROBE {{result 0}}"
`)
	code, out, errs := p.brood(t.Context(), env, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	var res string
	for _, r := range p.rootTranscript() {
		if r.Type == session.RecToolResult && r.Tool == "Task" {
			res = r.Output
		}
	}
	if !strings.Contains(res, "probed") {
		t.Fatalf("the %s child's probe did not run to its end:\n%s\n%s", agent, res, errs)
	}
	return res
}

// signalProbe finds the brood child the command runs under (the first
// ancestor whose command line holds --task-id) and that child's parent,
// the root brood, and sends each signal 0.
const signalProbe = `ok=OK; no=DONE; c=$PPID
while [ "$c" -gt 1 ] && ! tr '\0' ' ' </proc/$c/cmdline | grep -q -- --task-id; do c=$(awk '/^PPid/{print $2}' /proc/$c/status); done
r=$(awk '/^PPid/{print $2}' /proc/$c/status)
echo "child $c root $r"
kill -0 $c 2>&1 && echo CHILD-SIGNALLED-$ok
[ "$r" -gt 1 ] && kill -0 $r 2>&1 && echo ROOT-SIGNALLED-$no
echo probed`

// TestEveryClassCannotSignalItsParent: no class of child, those that
// mount first included (they apply their scope after their mounts, or
// start in a base domain holding it), signals the brood that started it,
// which runs as the same user; its command still signals the child it
// runs under. (Landlock's signal scope, ABI 6.)
func TestEveryClassCannotSignalItsParent(t *testing.T) {
	needLandlock(t)
	if sandbox.LandlockABI() < 6 {
		t.Skip("no Landlock signal scope before ABI 6")
	}
	for _, c := range childClasses {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# r\n"})
			writeFile(t, filepath.Join(p.home, ".config", "brood", "agents", "iso.md"),
				"---\nname: iso\ndescription: isolated writer\ntools: Bash\nisolation: worktree\n---\nWrite.\n")
			res := probeChild(t, p, c.agent, c.env, signalProbe)
			if !strings.Contains(res, "CHILD-SIGNALLED-OK") {
				t.Errorf("%s: its command could not signal the child it runs under (the probe found no child?):\n%s", c.name, res)
			}
			if strings.Contains(res, "ROOT-SIGNALLED-DONE") {
				t.Errorf("%s: the child signalled the brood that started it:\n%s", c.name, res)
			}
		})
	}
}
