package attack_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/taskdir"
)

// TestInPlaceGuardSurvivesRootDeath (redteam19 P1-4): an in-place writer
// points .git/commondir at a git directory of its own (an fsmonitor in
// its config), which no kernel rule holds, and its root dies before the
// writer ends. A SIGHUP (a closed terminal tab, a dropped ssh) stops the
// root in order: its guard puts .git back before it exits. A kill -9 runs
// nothing: the guard's record, written before the child started, is put
// back by the next brood in the project (here `brood tasks`), which says
// so. Either way the user's `git status` afterwards runs nothing of the
// child's.
func TestInPlaceGuardSurvivesRootDeath(t *testing.T) {
	needLandlock(t)
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
	}{
		{"SIGHUP", syscall.SIGHUP},
		{"SIGQUIT", syscall.SIGQUIT},
		{"kill -9", syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"attack.sh": commondirAttack, "README.md": "# r\n"})
			marker := filepath.Join(t.TempDir(), "ran")
			mdl := p.script("crash.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: crash, prompt: "go"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: `+strconv.Quote("sh attack.sh "+marker)+`}
    - delay: 300s
      say: "child done"
`)
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
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
			waitFor(t, "the child's .git/commondir", func() bool {
				_, err := os.Stat(filepath.Join(p.root, "tried.txt"))
				return err == nil
			})
			if _, err := os.Lstat(commondir); err != nil {
				t.Fatalf("the child planted no .git/commondir (%v): the test did not reach its scenario\n%s", err, errb.String())
			}
			if err := root.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			_ = root.Wait()
			if tc.sig == syscall.SIGKILL {
				if _, err := os.Lstat(commondir); err != nil {
					t.Fatalf("kill -9 left no .git/commondir (%v): the test did not reach its scenario", err)
				}
				// The child, its root gone, winds down on its own.
				pid := childPID(t, p.root, p.onlyTaskID())
				waitFor(t, fmt.Sprintf("the child (pid %d) to end", pid), func() bool { return !running(pid) })
				code, out, errs := p.brood(t.Context(), nil, "tasks")
				if code != 0 {
					t.Fatalf("brood tasks: code %d\n%s\n%s", code, out, errs)
				}
				if !strings.Contains(errs, "put back now") || !strings.Contains(errs, "commondir") {
					t.Errorf("brood tasks did not say it put .git/commondir back:\n%s", errs)
				}
				ents, _ := os.ReadDir(filepath.Join(taskdir.Open(p.root).Records().Path(), "guards"))
				for _, e := range ents {
					if e.Name() != "put-aside" { // what the put-back replaced, kept for the user
						t.Errorf("the guard's record is still there after it was put back: %v", e.Name())
					}
				}
			}
			if b, err := os.ReadFile(commondir); err == nil {
				t.Fatalf("the child's .git/commondir is left in the user's repository after %s: %q\n%s", tc.name, b, errb.String())
			}
			user := exec.Command("git", "status", "--short")
			user.Dir, user.Env = p.root, append(os.Environ(), "HOME="+p.home)
			outb, _ := user.CombinedOutput()
			if b, err := os.ReadFile(marker); err == nil {
				t.Errorf("the user's git status ran the child's fsmonitor (%q)\n%s", b, outb)
			}
		})
	}
}

// waitFor polls cond until it holds, failing t after two minutes (a
// deadline, not a measure: the machine may be loaded).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited two minutes for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childPID is the pid of task id's child, from its dispatch log.
func childPID(t *testing.T, root, id string) int {
	t.Helper()
	var lg struct {
		PID int `json:"pid"`
	}
	b, err := os.ReadFile(filepath.Join(root, ".brood", "dispatch", id, "dispatch-log.json"))
	if err == nil {
		err = json.Unmarshal(b, &lg)
	}
	if err != nil || lg.PID <= 0 {
		t.Fatalf("no child pid for task %s: %v %s", id, err, b)
	}
	return lg.PID
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] != 'Z' && s[i+2] != 'X'
}
