package dispatch

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAliveByProc: a running process whose command line names the task is
// alive; one that has exited (a zombie, not yet reaped) is not; the flags
// ReadProc returns say a running process is not exiting, which is how an
// empty command line (an exec in progress, or an exit) is told apart.
func TestAliveByProc(t *testing.T) {
	const id = "01ALIVEBYPROCTEST000000000"
	sleeper := exec.Command("sh", "-c", "sleep 60; :", id) // $0 names the task
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	exited := exec.Command("true", id)
	if err := exited.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for it to exit without reaping it: it stays a zombie.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, exited.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exited.Wait() })
	for _, c := range []struct {
		name string
		pid  int
		id   string
		want bool
	}{
		{"running, its task", sleeper.Process.Pid, id, true},
		{"running, another task", sleeper.Process.Pid, "01OTHERTASK000000000000000", false},
		{"exited, not reaped", exited.Process.Pid, id, false},
	} {
		if got := Alive(c.pid, c.id); got != c.want {
			t.Errorf("%s: Alive = %v, want %v", c.name, got, c.want)
		}
	}
	// A task's pid reused by a kernel thread (empty command line, never
	// exiting) is not the task's process. Seen only where this process
	// can signal one (root with the host's pids).
	if k := kernelThread(); k != 0 {
		if Alive(k, id) {
			t.Errorf("kernel thread %d: Alive = true, want false", k)
		}
	} else {
		t.Log("no kernel thread this process can signal: that case is not looked at here")
	}
	p, ok := ReadProc(os.Getpid())
	if !ok || p.State == "Z" || p.Flags&pfExiting != 0 {
		t.Fatalf("this process read as %+v (ok %v)", p, ok)
	}
}

// kernelThread is a kernel thread's pid this process may signal, or 0.
func kernelThread() int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := ReadProc(pid); ok && p.Flags&pfKthread != 0 && syscall.Kill(pid, 0) == nil {
			return pid
		}
	}
	return 0
}
