package attack_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
)

// metaProbeEnv makes the test binary a metadata prober: for each argument
// TAG=PATH it tries chmod, chown (to the file's own owner), utimes and
// setxattr on PATH and prints one line per call, "META TAG OP ok" or
// "META TAG OP <error>". The calls are the system calls themselves, so a
// refusal is the kernel's (mounts, syscall filter), not a tool's.
const metaProbeEnv = "BROOD_ATTACK_METAPROBE"

var metaOps = []string{"chmod", "chown", "utimes", "setxattr"}

func metaProbe(args []string) int {
	when := time.Date(2000, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, a := range args {
		tag, path, _ := strings.Cut(a, "=")
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			fmt.Printf("META %s stat %v\n", tag, err)
			continue
		}
		for _, op := range metaOps {
			var err error
			switch op {
			case "chmod":
				err = unix.Chmod(path, 0o600)
			case "chown":
				err = unix.Lchown(path, int(st.Uid), int(st.Gid))
			case "utimes":
				err = os.Chtimes(path, when, when)
			case "setxattr":
				err = unix.Setxattr(path, "user.brood", []byte("x"), 0)
			}
			res := "ok"
			if err != nil {
				res = strings.ReplaceAll(err.Error(), " ", "_")
			}
			fmt.Printf("META %s %s %s\n", tag, op, res)
		}
	}
	return 0
}

// tmpWork is what a read-only child does in its TMPDIR: the shell tools
// that set times and modes (touch -d, chmod, cp -p, tar x), each checked.
const tmpWork = `touch -d 2000-01-01 $TMPDIR/f && chmod 600 $TMPDIR/f && cp -p $TMPDIR/f $TMPDIR/g && tar cf $TMPDIR/t.tar -C $TMPDIR f && mkdir $TMPDIR/x && tar xf $TMPDIR/t.tar -C $TMPDIR/x && stat -c 'G %a %Y' $TMPDIR/g && stat -c 'X %a %Y' $TMPDIR/x/f && echo TMP-OK`

// TestReadOnlyChildSetsMetadataInTmpdir (issue 25, item 14): a read-only
// child sets times and modes on files in its own TMPDIR (touch -d, chmod,
// cp -p, tar x work there) and changes no other file's metadata: chmod,
// chown, utimes and setxattr fail on a file in the work tree, in HOME and
// outside the project (its mounts are read-only but its task directory),
// whether the child starts cold, warm (pool.warm) or below a child that
// delegates (nested: there the syscall filter, which the child inherits,
// keeps denying metadata calls, TMPDIR's included; see docs/trust.md).
func TestReadOnlyChildSetsMetadataInTmpdir(t *testing.T) {
	needLandlock(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"cold", "warm", "nested"} {
		t.Run(mode, func(t *testing.T) {
			p := newProject(t, map[string]string{"README.md": "# r\n"})
			outside := filepath.Join(t.TempDir(), "outside")
			home := filepath.Join(p.home, "victim")
			for _, f := range []string{outside, home} {
				writeFile(t, f, "x\n")
			}
			readme := filepath.Join(p.root, "README.md")
			stats := map[string]os.FileInfo{}
			for _, f := range []string{readme, outside, home} {
				fi, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				stats[f] = fi
			}
			probe := fmt.Sprintf("%s=1 %s tmp=$TMPDIR/probe tree=README.md home=%s outside=%s", metaProbeEnv, exe, home, outside)
			child := `    - tools:
        - Bash: {command: "` + strings.ReplaceAll(tmpWork, `"`, `\"`) + `"}
        - Bash: {command: ": > $TMPDIR/probe; ` + probe + `"}
        - Bash: {command: "p=$PPID; while [ $p -gt 1 ]; do c=$(tr '\\0' ' ' </proc/$p/cmdline); case $c in *--task-id*) echo ARGV $c; break;; esac; p=$(awk '/^PPid/{print $2}' /proc/$p/status); done"}
    - say: "RESULT {{result 0}} // {{result 1}} // {{result 2}}"
`
			root := `  root:
    - tools:
        - Task: {subagent_type: explore, description: meta, prompt: "meta"}
    - say: "root done"
`
			args := []string{"run", "--permission-mode", "bypassPermissions"}
			var env []string
			switch mode {
			case "warm":
				// The root waits for its warm child to be up (a process
				// with --warm whose envelope is in this project), so the
				// explore takes it rather than starting cold.
				root = `  root:
    - tools:
        - Bash: {command: "for i in $(seq 1 600); do for f in /proc/[0-9]*/cmdline; do c=$(tr '\\0' ' ' <$f 2>/dev/null); case $c in *$PWD/.brood/dispatch/*--warm*) echo WARM-ID ${c#*--task-id }; exit 0;; esac; done; sleep 0.1; done; echo NO-WARM"}
    - tools:
        - Task: {subagent_type: explore, description: meta, prompt: "meta"}
    - say: "root done"
`
				env = append(env, "BROOD_WARM=1")
			case "nested":
				root = `  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: outer, prompt: "outer"}
    - say: "root done"
  general-purpose:
    - tools:
        - Task: {subagent_type: explore, description: meta, prompt: "meta"}
    - say: "## What I did\nDelegated.\n\n## What I found\n{{result 0}}\n\n## Files changed\nnone\n\n## Problems\nnone"
`
				args = append(args, "--max-subagent-depth", "2")
			}
			mdl := p.script("tmpmeta.yaml", "agents:\n"+root+"  explore:\n"+child)
			args = append(args, "--model", mdl, "go")
			code, out, errs := p.brood(t.Context(), env, args...)
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			for _, tk := range tasks0(p) {
				if tk.Status != dispatch.StatusDone {
					se, _ := os.ReadFile(filepath.Join(dispatch.Dir(p.root, tk.ID), "stderr.log"))
					t.Errorf("task %s (%s) %s; its stderr:\n%s", tk.ID, tk.Agent, tk.Status, se)
				}
			}
			var res string
			tasks, _ := dispatch.ListTasks(p.root)
			for _, tk := range tasks {
				if tk.Agent == "explore" && tk.Result != nil {
					res = tk.Result.Summary
					if want := map[string]int{"nested": 2}[mode]; tk.Depth != max(want, 1) {
						t.Errorf("explore at depth %d", tk.Depth)
					}
					// Where the child can see its own process (no PID
					// namespace of its own, whose pids /proc does not
					// show), its command line says whether it started warm.
					if argv := lineWith(res, "ARGV "); argv != "" && ((mode == "warm") != strings.Contains(argv, "--warm") || !strings.Contains(argv, tk.ID)) {
						t.Errorf("%s: the explore child's command line is %q (task %s)", mode, argv, tk.ID)
					}
				}
			}
			if mode == "warm" {
				// The root saw the warm child before it dispatched: the
				// explore is that child's task.
				warm := ""
				for _, r := range p.rootTranscript() {
					if r.Type == session.RecToolResult && r.Tool == "Bash" {
						if f := strings.Fields(lineWith(r.Output, "WARM-ID ")); len(f) > 1 {
							warm = f[1]
						}
					}
				}
				var explore string
				for _, tk := range tasks {
					if tk.Agent == "explore" {
						explore = tk.ID
					}
				}
				if warm == "" || warm != explore {
					t.Fatalf("the explore (task %s) is not the warm child the root saw (%q)", explore, warm)
				}
			}
			checkTmpWork(t, mode, res, errs)
			for _, tag := range []string{"tree", "home", "outside"} {
				for _, op := range metaOps {
					if l := lineWith(res, "META "+tag+" "+op+" "); l == "" || strings.HasSuffix(l, " ok") {
						t.Errorf("%s: %s on the %s file was not refused: %q\n%s", mode, op, tag, l, res)
					}
				}
			}
			for f, before := range stats {
				after, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if !after.ModTime().Equal(before.ModTime()) || after.Mode() != before.Mode() {
					t.Errorf("%s changed: mtime %v -> %v, mode %v -> %v", f, before.ModTime(), after.ModTime(), before.Mode(), after.Mode())
				}
				if _, err := unix.Getxattr(f, "user.brood", make([]byte, 8)); err == nil {
					t.Errorf("%s got the child's extended attribute", f)
				}
			}
		})
	}
}

// checkTmpWork checks what the child did in its TMPDIR: every metadata
// call and tool worked, and the copy and the extracted file kept the mode
// and the time (2000-01-01 in any time zone) set on the original. A nested
// child's TMPDIR holds no metadata call: its filter denies them all.
func checkTmpWork(t *testing.T, mode, res, errs string) {
	t.Helper()
	if mode == "nested" {
		if strings.Contains(res, "TMP-OK") || !strings.Contains(res, "META tmp chmod ") {
			t.Errorf("nested: want the filter to deny metadata in TMPDIR too:\n%s", res)
		}
		return
	}
	if !strings.Contains(res, "TMP-OK") {
		t.Fatalf("%s: touch, chmod, cp -p and tar x failed in the read-only child's TMPDIR:\n%s\n%s", mode, res, errs)
	}
	for _, op := range metaOps {
		if l := lineWith(res, "META tmp "+op+" "); !strings.HasSuffix(l, " ok") {
			t.Errorf("%s: %s in TMPDIR: %q", mode, op, l)
		}
	}
	lo := time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(2000, 1, 2, 0, 0, 0, 0, time.UTC).Unix()
	for _, tag := range []string{"G", "X"} {
		f := strings.Fields(lineWith(res, tag+" "))
		var mtime int64
		if len(f) == 3 {
			mtime, _ = strconv.ParseInt(f[2], 10, 64)
		}
		if len(f) != 3 || f[1] != "600" || mtime < lo || mtime > hi {
			t.Errorf("%s: %s: %v, want mode 600 and 2000-01-01:\n%s", mode, tag, f, res)
		}
	}
}

// lineWith is the first line of s that starts with prefix (after a
// leading "RESULT " or "// "), or "".
func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(l), "RESULT "), "// "))
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func tasks0(p *project) []*dispatch.Task {
	tasks, _ := dispatch.ListTasks(p.root)
	return tasks
}
