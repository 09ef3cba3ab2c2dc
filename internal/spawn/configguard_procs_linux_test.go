package spawn

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/trust"
)

// TestCrashRestoreKillsPIDNamespace: under pidns containment (no cgroup of
// its own) an in-place child whose root died can still run, with a setsid
// daemon in its namespace that would plant .git/commondir again. The next
// brood kills the child — named by the record (pid and start time), or,
// when the root died before the record named it, found by its argv[0]
// marker as a PID namespace's init started after the root — and with it
// the namespace, before it puts back. A process that only looks like the
// child (another task's, not a namespace's init, older than the root, the
// child of a live root that resumed the task since) is never killed.
func TestCrashRestoreKillsPIDNamespace(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", "")
	if _, err := os.Stat("/proc/self/ns/pid"); err != nil {
		t.Fatalf("no PID namespaces here: %v", err)
	}
	for _, tc := range []struct {
		name           string
		named, resumed bool
	}{
		{"named", true, false},
		{"unnamed", false, false},
		{"unnamed, the task resumed by a live root", false, true},
	} {
		named := tc.named
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			state, err := trust.SnapshotPaths(root, []string{".git/commondir"})
			if err != nil {
				t.Fatal(err)
			}
			sr, _ := state.Record()
			id := taskdir.NewID()
			marker := depth.Marker{Task: id, Depth: 1, Max: 1}.String()
			// Decoys, started before the root: none is the child's.
			older := startNS(t, marker, true, "older")
			ownerStart := afterStart(t, older.Process.Pid)
			decoys := []*exec.Cmd{older,
				startNS(t, depth.Marker{Task: taskdir.NewID(), Depth: 1, Max: 1}.String(), true, "other"),
				startNS(t, marker, false, "plain")}
			child := startNS(t, marker, true, "child")
			daemon := waitProc(t, "daemon-child")
			planted := filepath.Join(root, ".git", "commondir")
			if err := os.WriteFile(planted, []byte("../evil\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			rec := guardRecord{Version: guardRecordVersion, TaskID: id, Project: root, Owner: procID{PID: 1 << 30, Start: ownerStart}, States: []trust.StateRecord{sr}}
			if named {
				c := procOf(child.Process.Pid)
				rec.Child = &c
			}
			dir := filepath.Join(taskdir.Open(root).Records().Path(), guardsDir)
			if err := writeGuardRecord(dir, &rec); err != nil {
				t.Fatal(err)
			}
			if tc.resumed {
				// This process is the live root that resumed the task:
				// it holds the task's lock, and "child" is its child.
				td := filepath.Join(taskdir.Open(root).DispatchRoot(), id)
				if err := os.MkdirAll(td, 0o700); err != nil {
					t.Fatal(err)
				}
				f, err := os.Open(td)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
					t.Fatal(err)
				}
				RestoreCrashedGuards(root)
				if !procOf(child.Process.Pid).alive() || !daemon.alive() {
					t.Errorf("the live root's child of the same task (pid %d) was killed", child.Process.Pid)
				}
				return
			}
			lines := RestoreCrashedGuards(root)
			if daemon.alive() {
				t.Errorf("the child's setsid daemon (pid %d) still runs after the put-back", daemon.PID)
			}
			if _, err := os.Lstat(planted); err == nil {
				t.Errorf(".git/commondir was not put back (lines %q)", lines)
			}
			if len(lines) != 1 || !strings.Contains(lines[0], ".git/commondir") {
				t.Errorf("lines %q, want one naming .git/commondir", lines)
			}
			for _, d := range decoys {
				if !procOf(d.Process.Pid).alive() {
					t.Errorf("%s (pid %d) was killed: it is not the child's", d.Args[len(d.Args)-1], d.Process.Pid)
				}
			}
		})
	}
}

// startNS starts sh, argv[0] marker, as the init of a PID namespace of its
// own (ns) or not, with a setsid daemon below it named daemon-<tag>.
func startNS(t *testing.T, marker string, ns bool, tag string) *exec.Cmd {
	t.Helper()
	script := `setsid sh -c "sleep 600; : daemon-$1" </dev/null >/dev/null 2>&1 & sleep 600; : $1`
	cmd := exec.Command("/bin/sh", "-c", script, "sh", tag+"-"+strconv.Itoa(os.Getpid()))
	cmd.Args[0] = marker
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if ns {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID
		if os.Geteuid() != 0 {
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
			cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
			cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if d := findProc("daemon-" + tag + "-" + strconv.Itoa(os.Getpid())); d.PID > 0 {
			_ = syscall.Kill(d.PID, syscall.SIGKILL)
		}
	})
	return cmd
}

// waitProc waits for the process whose command line ends in tag-<our pid>.
func waitProc(t *testing.T, tag string) procID {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if p := findProc(tag + "-" + strconv.Itoa(os.Getpid())); p.PID > 0 {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process %s after a minute", tag)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// findProc is the live process whose command line ends in ": tag".
func findProc(tag string) procID {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.HasSuffix(strings.TrimRight(string(b), "\x00"), ": "+tag) {
			if p := procOf(pid); p.alive() {
				return p
			}
		}
	}
	return procID{}
}

// afterStart is a start time (clock ticks since boot, as /proc says) later
// than pid's, once the clock has passed it: what a root started after pid
// would have.
func afterStart(t *testing.T, pid int) string {
	t.Helper()
	s, err := strconv.ParseUint(procStart(pid), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile("/proc/uptime")
		if err != nil {
			t.Fatal(err)
		}
		up, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(up*100) > s+1 {
			return strconv.FormatUint(s+1, 10)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
