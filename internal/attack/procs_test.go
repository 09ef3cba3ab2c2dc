package attack_test

import (
	"context"
	"encoding/json"
	"github.com/broodhq/brood/internal/sandbox/sandboxtest"
	"github.com/broodhq/brood/internal/taskdir"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// containments are the ways a child's tree is held that every process
// attack runs under: whatever this machine gives (a cgroup where cgroup v2
// is writable) and the PID-namespace fallback, forced.
var containments = []struct{ name, env string }{
	{"auto", "BROOD_CONTAINMENT=auto"},
	{"pidns", "BROOD_CONTAINMENT=pidns"},
}

// uniqueSleep and liveWith are sandboxtest's (UniqueSleep, LiveWith).
func uniqueSleep() string       { return sandboxtest.UniqueSleep() }
func liveWith(arg string) []int { return sandboxtest.LiveWith(arg) }

// eventually polls cond (bounded): for a state another process reaches.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEscapedGrandchild (case 3): a grandchild that leaves the child's
// session with setsid and holds the child's stdout must not hang the
// parent, and must not outlive the child.
func TestEscapedGrandchild(t *testing.T) {
	for _, c := range containments {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, nil)
			dur := uniqueSleep()
			// The grandchild leaves the session holding the child's stdout
			// where it can (a non-dumpable child's /proc/PID/fd is out of
			// its Bash's reach, so the redirect is refused); either way a
			// grandchild escapes with setsid, and says so in mark.
			mark := filepath.Join(p.root, "escaped") // where an in-place writer may write
			escape := "sh -c 'echo $$ > " + mark + "; exec sleep " + dur + "'"
			mdl := p.script("escape.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: escape, prompt: "escape"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: "setsid -f `+escape+` > /proc/$PPID/fd/1 2>/dev/null || setsid -f `+escape+`; for i in $(seq 400); do [ -s `+mark+` ] && break; sleep 0.05; done; echo left"}
    - say: "child done"
`)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			code, out, errs := p.brood(ctx, []string{c.env}, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if ctx.Err() != nil {
				t.Fatalf("brood run hung on the escaped grandchild (killed after 2 minutes)\n%s", errs)
			}
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			if b, err := os.ReadFile(mark); err != nil || len(strings.TrimSpace(string(b))) == 0 {
				t.Fatalf("the grandchild never escaped (no pid in %s: %v): the test did not reach its scenario", mark, err)
			}
			if left := liveWith(dur); len(left) > 0 {
				for _, pid := range left {
					syscall.Kill(pid, syscall.SIGKILL)
				}
				t.Fatalf("the escaped grandchild %v outlived its child (containment %s)", left, c.name)
			}
		})
	}
}

// slowChild is a scripted explore child that thinks for an hour.
const slowChild = `agents:
  explore:
    - say: "thinking"
      delay: 1h
`

// startBackground starts `brood subagent --background explore` and returns
// the task id and the process.
func startBackground(t *testing.T, p *project, env []string, mdl string) (string, *exec.Cmd) {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "subagent", "--background", "--model", mdl, "explore", "think")
	cmd.Dir = p.root
	cmd.Env = append(append([]string{}, p.Env...), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var id string
	eventually(t, "the background task's child to start", func() bool {
		ents, _ := os.ReadDir(filepath.Join(p.root, ".brood", "dispatch"))
		for _, e := range ents {
			var lg struct {
				PID int `json:"pid"`
			}
			b, err := os.ReadFile(filepath.Join(p.root, ".brood", "dispatch", e.Name(), "dispatch-log.json"))
			if err == nil && json.Unmarshal(b, &lg) == nil && lg.PID > 0 {
				id = e.Name()
				return true
			}
		}
		return false
	})
	return id, cmd
}

// TestTasksKillIgnoresTheRecordedPID (case 2): the dispatch log is the
// child's to write; a pid in it (an unrelated process group, or 1, which
// would mean kill(-1)) is never signalled, and the real child is stopped.
func TestTasksKillIgnoresTheRecordedPID(t *testing.T) {
	for _, forged := range []string{"victim", "1"} {
		t.Run(forged, func(t *testing.T) {
			p := newProject(t, nil)
			mdl := p.script("slow.yaml", slowChild)
			victim := exec.Command("sleep", uniqueSleep())
			victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := victim.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { victim.Process.Kill(); victim.Wait() }()
			id, parent := startBackground(t, p, nil, mdl)
			logPath := filepath.Join(p.root, ".brood", "dispatch", id, "dispatch-log.json")
			var lg map[string]any
			b, _ := os.ReadFile(logPath)
			if err := json.Unmarshal(b, &lg); err != nil {
				t.Fatal(err)
			}
			pid := victim.Process.Pid
			if forged == "1" {
				pid = 1
			}
			lg["pid"] = pid
			b, _ = json.Marshal(lg)
			if err := os.WriteFile(logPath, b, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errs := p.brood(t.Context(), nil, "tasks", "kill", id)
			if code != 0 || !strings.Contains(out, "stopped task "+id) {
				t.Fatalf("tasks kill: code %d\n%s\n%s", code, out, errs)
			}
			if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
				t.Fatalf("the process the forged log named was signalled: %v", err)
			}
			parent.Wait()
			var res struct {
				Status string `json:"status"`
			}
			b, _ = os.ReadFile(filepath.Join(p.root, ".brood", "dispatch", id, "result.json"))
			// (How the stop is recorded is the records' business; what
			// matters here is that the real child did not go on to finish.)
			if json.Unmarshal(b, &res) != nil || res.Status == "done" || res.Status == "" {
				stderr, _ := os.ReadFile(filepath.Join(p.root, ".brood", "dispatch", id, "stderr.log"))
				t.Errorf("the real child was not stopped: result %s\nkill said: %s\nchild stderr: %s", b, out, stderr)
			}
		})
	}
}

// TestDepthWithoutTheEnvironment (case 8): a root ignores the depth stamps
// in its own environment, and a child at the cap that strips them and runs
// brood from Bash is still at the cap.
func TestDepthWithoutTheEnvironment(t *testing.T) {
	t.Run("root ignores a raised max stamp", func(t *testing.T) {
		p := newProject(t, nil)
		writeFile(t, filepath.Join(p.home, ".config", "brood", "settings.toml"), "maxSubagentDepth = 2\n")
		mdl := p.script("deep.yaml", `agents:
  "*":
    - tools:
        - Task: {subagent_type: general-purpose, description: deeper, prompt: "go deeper"}
    - say: "{{result 0}}"
`)
		code, out, errs := p.brood(t.Context(), []string{"BROOD_SUBAGENT_MAX_DEPTH=5", "BROOD_SUBAGENT_DEPTH=0"}, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
		if code != 0 {
			t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
		}
		if d := deepest(t, p); d != 2 {
			t.Fatalf("deepest task at depth %d, want 2 (maxSubagentDepth = 2 beats the stamp)\n%s", d, errs)
		}
	})
	for _, c := range containments {
		t.Run("stripped env at the cap/"+c.name, func(t *testing.T) {
			p := newProject(t, nil)
			exe, _ := os.Executable()
			inner := p.script("inner.yaml", `agents:
  root:
    - say: "inner root"
  explore:
    - say: "INNER CHILD RAN"
`)
			mdl := p.script("strip.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: strip, prompt: "strip"}
    - say: "{{result 0}}"
  general-purpose:
    - tools:
        - Bash: {command: "env -u BROOD_SUBAGENT_DEPTH -u BROOD_SUBAGENT_MAX_DEPTH BROOD_ATTACK_TEST_MAIN=1 `+exe+` subagent --model `+inner+` explore hello 2>&1; echo exit=$?"}
    - say: "{{result 0}}"
`)
			code, out, errs := p.brood(t.Context(), []string{c.env}, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if code != 0 {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			if strings.Contains(out, "INNER CHILD RAN") || !strings.Contains(out, "depth cap") {
				t.Fatalf("the child at the cap started a new tree:\n%s\n%s", out, errs)
			}
			if d := deepest(t, p); d != 1 {
				t.Fatalf("deepest task at depth %d, want 1", d)
			}
		})
	}
}

// deepest is the largest depth among the project's dispatch logs.
func deepest(t *testing.T, p *project) int {
	t.Helper()
	d := 0
	dirs, _ := taskdir.Open(p.root).Tasks() // top-level and nested
	for _, td := range dirs {
		var lg struct {
			Depth int `json:"depth"`
		}
		b, err := os.ReadFile(td.File("dispatch-log.json"))
		if err == nil && json.Unmarshal(b, &lg) == nil {
			d = max(d, lg.Depth)
		}
	}
	return d
}

// TestReadOnlyMetadata (case 7): a read-only child cannot chmod, touch -d
// or chown the tree (Landlock does not cover them; the seccomp filter does)
// and its result says what held it.
func TestReadOnlyMetadata(t *testing.T) {
	p := newProject(t, nil)
	before, err := os.Stat(filepath.Join(p.root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	mdl := p.script("meta.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: meta, prompt: "meta"}
    - say: "root done"
  explore:
    - tools:
        - Bash: {command: "chmod +x main.go; touch -d 2001-01-01 README.md; chown $(id -u):$(id -g) main.go; echo tried"}
    - say: "looked around"
`)
	code, out, errs := p.brood(t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if diff := p.git("diff", "--summary"); strings.Contains(diff, "mode change") {
		t.Errorf("the read-only child changed a mode: %s", diff)
	}
	after, err := os.Stat(filepath.Join(p.root, "README.md"))
	if err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the read-only child changed README.md's mtime: %v -> %v", before.ModTime(), after.ModTime())
	}
	ents, _ := os.ReadDir(filepath.Join(p.root, ".brood", "dispatch"))
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(p.root, ".brood", "dispatch", e.Name(), "result.json"))
		if !strings.Contains(string(b), "seccomp") {
			t.Errorf("the result does not say what held metadata: %s", b)
		}
	}
}
