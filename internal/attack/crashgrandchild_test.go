package attack_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

const daemonAttack = `sh attack.sh "$1"
E=$TMPDIR/evil
setsid sh -c "i=0; while [ \$i -lt 900 ]; do [ -e .git/commondir ] || { echo $E > .git/commondir; echo x >> replanted.txt; }; sleep 0.1; i=\$((i+1)); done; : daemon $1" </dev/null >/dev/null 2>&1 &
echo daemon-started
`

// TestCrashRestoreKillsGrandchild: after a kill -9 of the root, a daemon the
// in-place child left behind (in its cgroup as root; in its PID namespace
// under pidns containment, as brood-unpriv) is gone before the guard puts
// back, so it cannot plant .git/commondir again. The daemon is known by
// its pid as this process sees it (the host's /proc, never the $$ it has
// inside its namespace) and its start time.
func TestCrashRestoreKillsGrandchild(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"attack.sh": commondirAttack, "attack2.sh": daemonAttack, "README.md": "# r\n"})
	marker := filepath.Join(t.TempDir(), "ran")
	mdl := p.script("crash.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: crash, prompt: "go"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: `+strconv.Quote("sh attack2.sh "+marker)+`}
    - delay: 300s
      say: "child done"
`)
	exe, _ := os.Executable()
	root := exec.Command(exe, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	root.Dir, root.Env = p.root, p.Env
	root.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var errb bytes.Buffer
	root.Stdout, root.Stderr = &errb, &errb
	if err := root.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = root.Process.Kill(); _ = root.Wait() })
	commondir := filepath.Join(p.root, ".git", "commondir")
	waitFor(t, "tried", func() bool { _, err := os.Stat(filepath.Join(p.root, "tried.txt")); return err == nil })
	var daemon, start string
	waitFor(t, "the daemon", func() bool { daemon, start = findDaemon(marker); return daemon != "" })
	t.Cleanup(func() {
		if daemonRuns(daemon, start) {
			pid, _ := strconv.Atoi(daemon)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	_ = root.Process.Signal(syscall.SIGKILL)
	_ = root.Wait()
	pid := childPID(t, p.root, p.onlyTaskID())
	waitFor(t, fmt.Sprintf("child %d end", pid), func() bool { return !running(pid) })
	code, _, errs := p.brood(t.Context(), nil, "tasks")
	t.Logf("brood tasks code %d: %s", code, errs)
	if daemonRuns(daemon, start) {
		t.Errorf("the child's daemon (pid %s) still runs after the put-back", daemon)
	}
	if b, err := os.ReadFile(commondir); err == nil {
		t.Errorf("after restore, .git/commondir is back: %q", b)
	}
	user := exec.Command("git", "status", "--short")
	user.Dir, user.Env = p.root, append(os.Environ(), "HOME="+p.home)
	outb, _ := user.CombinedOutput()
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("user's git status ran the child's fsmonitor (%q)\n%s", strings.TrimSpace(string(b)), outb)
	}
	code, _, errs = p.brood(t.Context(), nil, "tasks")
	t.Logf("second brood tasks code %d: %s", code, errs)
}

// findDaemon is the pid and start time, in this process's /proc, of the
// daemon of daemonAttack run for marker ("" while there is none).
func findDaemon(marker string) (pid, start string) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), "while") || !strings.HasSuffix(strings.TrimRight(string(b), "\x00"), ": daemon "+marker) {
			continue
		}
		if st := procStartTime(e.Name()); st != "" {
			return e.Name(), st
		}
	}
	return "", ""
}

// daemonRuns reports whether pid still runs and is the process that
// started at start (not a zombie, not a reused pid).
func daemonRuns(pid, start string) bool {
	id, err := strconv.Atoi(pid)
	return err == nil && start != "" && procStartTime(pid) == start && running(id)
}

// procStartTime is field 22 of /proc/PID/stat, "" when there is no such process.
func procStartTime(pid string) string {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}
