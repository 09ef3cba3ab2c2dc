package attack_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"fmt"
	"path/filepath"
)

// TestCrashRestorePutsAside: what the user changed after the crash and the
// put-back replaces (a remote, a hook) is moved aside, and the line says where.
func TestCrashRestorePutsAside(t *testing.T) {
	needLandlock(t)
	p := newProject(t, map[string]string{"README.md": "# r\n"})
	mdl := p.script("c.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: crash, prompt: "go"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: `+strconv.Quote("echo tried > tried.txt")+`}
    - delay: 300s
      say: "child done"
`)
	exe, _ := os.Executable()
	root := exec.Command(exe, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	root.Dir, root.Env = p.root, p.Env
	root.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := root.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "tried", func() bool { _, err := os.Stat(filepath.Join(p.root, "tried.txt")); return err == nil })
	_ = root.Process.Signal(syscall.SIGKILL)
	_ = root.Wait()
	pid := childPID(t, p.root, p.onlyTaskID())
	waitFor(t, fmt.Sprintf("child %d end", pid), func() bool { return !running(pid) })
	// The user's own work afterwards: a remote, a pre-commit hook.
	p.git("remote", "add", "origin", "https://example.com/user/repo.git")
	writeFile(t, filepath.Join(p.root, ".git", "hooks", "pre-commit"), "#!/bin/sh\nmake lint\n")
	_, _, errs := p.brood(t.Context(), nil, "tasks")
	t.Logf("brood tasks: %s", errs)
	aside := filepath.Join(p.root, ".brood", "records", "guards", "put-aside", p.onlyTaskID())
	if !strings.Contains(errs, aside) {
		t.Errorf("the line does not name %s: %s", aside, errs)
	}
	var hook, config bool
	_ = filepath.WalkDir(aside, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(path)
		hook = hook || strings.HasSuffix(path, "/.git/hooks/pre-commit") && strings.Contains(string(b), "make lint")
		config = config || strings.HasSuffix(path, "/.git/config") && strings.Contains(string(b), "example.com/user/repo.git")
		return nil
	})
	if !hook || !config {
		t.Errorf("the user's hook (%v) and remote (%v) are not kept in %s", hook, config, aside)
	}
}
