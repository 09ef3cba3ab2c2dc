package tui_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// close ends the tmux server (brood, if still there, gets SIGHUP) and
// waits until the processes in its panes have exited: one still exiting
// (a shell saving its history, brood writing its session) would write
// into the test's directories while they are being removed.
func (tm *term) close() {
	var fds []int
	out, _ := exec.Command("tmux", "-S", tm.sock, "list-panes", "-a", "-F", "#{pane_pid}").Output()
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		if fd, err := unix.PidfdOpen(pid, 0); err == nil {
			fds = append(fds, fd)
		}
	}
	_ = exec.Command("tmux", "-S", tm.sock, "kill-server").Run()
	for _, fd := range fds {
		waitExit(tm.t, fd)
		_ = unix.Close(fd)
	}
}

// waitExit blocks until the process behind pidfd fd has exited (its
// pidfd becomes readable), up to a deadline generous for a loaded machine.
func waitExit(t *testing.T, fd int) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 1000)
		if n > 0 || (err != nil && err != unix.EINTR) {
			return
		}
	}
	t.Errorf("a process in the tmux pane did not exit within 60s of kill-server")
}
