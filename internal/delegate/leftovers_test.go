package delegate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestLeftoversListCannotAimOutside: groups.json is the child's to write; a
// group it lists that is not in its session is left alone, and so is the
// session leader itself. (That a group inside the session is killed is
// TestLeftoverProcessesDieWithTheirChild.)
func TestLeftoversListCannotAimOutside(t *testing.T) {
	start := func(attr *syscall.SysProcAttr) *exec.Cmd {
		c := exec.Command("sleep", "300")
		c.SysProcAttr = attr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	outside := start(&syscall.SysProcAttr{Setpgid: true})
	// A "child" in a session of its own, and a group inside that session.
	leader := start(&syscall.SysProcAttr{Setsid: true})
	dir := t.TempDir()
	list := "[" + strconv.Itoa(outside.Process.Pid) + "," + strconv.Itoa(leader.Process.Pid) + "]"
	if err := os.WriteFile(filepath.Join(dir, GroupsFile), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	killLeftovers(dir, leader.Process.Pid)
	if err := syscall.Kill(outside.Process.Pid, 0); err != nil {
		t.Fatalf("a group outside the child's session was killed: %v", err)
	}
	if err := syscall.Kill(leader.Process.Pid, 0); err != nil {
		t.Fatalf("the child's own session leader was killed by its leftovers list: %v", err)
	}
	if !groupsInSession(leader.Process.Pid)[leader.Process.Pid] {
		t.Fatal("groupsInSession does not see the session's own group")
	}
}
