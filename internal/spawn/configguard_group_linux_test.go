package spawn

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/trust"
)

// crashProject is a project with a .git, a guard state of .git/commondir
// and that file planted; it returns the root, the state and the planted
// path.
func crashProject(t *testing.T) (string, trust.StateRecord, string) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", "")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	state, err := trust.SnapshotPaths(root, []string{".git/commondir"})
	if err != nil {
		t.Fatal(err)
	}
	sr, _ := state.Record()
	planted := filepath.Join(root, ".git", "commondir")
	if err := os.WriteFile(planted, []byte("../evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, sr, planted
}

// startGroup starts a session leader (none containment: no cgroup, no
// namespace) with a member of its group, member-<tag>-<our pid>; the
// leader exits when stdin closes.
func startGroup(t *testing.T, tag string) (*exec.Cmd, procID, func()) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `sh -c "sleep 600; : member-$1" </dev/null >/dev/null 2>&1 & read x`, "sh", tag+"-"+strconv.Itoa(os.Getpid()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	member := waitProc(t, "member-"+tag)
	t.Cleanup(func() {
		_ = syscall.Kill(member.PID, syscall.SIGKILL)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, member, func() { in.Close(); _ = cmd.Wait() }
}

// TestCrashRestoreKillsGroupOfDeadChild: under none containment the child
// the record names has exited (reaped), but a member of its process group
// still runs: the next brood kills it, through its pidfd, before it puts
// back (review P3-1: it was reached only while the leader lived).
func TestCrashRestoreKillsGroupOfDeadChild(t *testing.T) {
	root, sr, planted := crashProject(t)
	cmd, member, end := startGroup(t, "dead-leader")
	child := procOf(cmd.Process.Pid)
	end()
	if child.alive() {
		t.Fatal("the leader still runs after its stdin closed")
	}
	rec := guardRecord{Version: guardRecordVersion, TaskID: taskdir.NewID(), Project: root, Owner: procID{PID: 1 << 30, Start: "1"}, Child: &child, Boot: bootID(), States: []trust.StateRecord{sr}}
	dir := filepath.Join(taskdir.Open(root).Records().Path(), guardsDir)
	if err := writeGuardRecord(dir, &rec); err != nil {
		t.Fatal(err)
	}
	lines := RestoreCrashedGuards(root)
	if member.alive() {
		t.Errorf("the dead child's group member (pid %d) still runs after the put-back", member.PID)
	}
	if _, err := os.Lstat(planted); err == nil || len(lines) != 1 || !strings.Contains(lines[0], ".git/commondir") {
		t.Errorf(".git/commondir was not put back (lines %q)", lines)
	}
}

// TestCrashRestoreAfterReboot: a record written before a reboot (another
// boot id) names no process of this boot's, whatever its pids and start
// times match now: it is put back, and nothing is killed — not even a
// live process its child's pid and start time name, nor one its owner's
// do (review P3-3).
func TestCrashRestoreAfterReboot(t *testing.T) {
	for _, tc := range []struct {
		name  string
		owner func() procID
	}{
		{"its owner's pid and start time name a live process", func() procID { return procOf(os.Getpid()) }},
		{"its owner's name none", func() procID { return procID{PID: 1 << 30, Start: "1"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, sr, planted := crashProject(t)
			cmd, member, _ := startGroup(t, "reboot")
			child := procOf(cmd.Process.Pid)
			rec := guardRecord{Version: guardRecordVersion, TaskID: taskdir.NewID(), Project: root, Owner: tc.owner(), Child: &child, Boot: "00000000-0000-0000-0000-000000000000", States: []trust.StateRecord{sr}}
			dir := filepath.Join(taskdir.Open(root).Records().Path(), guardsDir)
			if err := writeGuardRecord(dir, &rec); err != nil {
				t.Fatal(err)
			}
			lines := RestoreCrashedGuards(root)
			if !child.alive() || !member.alive() {
				t.Errorf("a process of this boot was killed for a record of another (child alive %v, member alive %v)", child.alive(), member.alive())
			}
			if _, err := os.Lstat(planted); err == nil || len(lines) != 1 || !strings.Contains(lines[0], ".git/commondir") {
				t.Errorf(".git/commondir was not put back (lines %q)", lines)
			}
		})
	}
}
