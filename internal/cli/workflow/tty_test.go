package workflow_test

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the controller and the terminal.
func openPTY(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pts: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// TestAskOnceOnATerminal: on a real terminal the run asks once, with the
// agent count, and an answer of y starts it; n starts nothing.
func TestAskOnceOnATerminal(t *testing.T) {
	for _, tc := range []struct {
		answer string
		code   int
		ran    bool
	}{{"y\n", 0, true}, {"n\n", 1, false}} {
		p := newProject(t, resumeScript)
		plan := p.plan("one.yaml", "name: one\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"quick one\"}]\n")
		ctrl, tty := openPTY(t)
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "workflow", "run", plan)
		cmd.Dir, cmd.Env = p.Root, p.Env
		var stderr bytes.Buffer
		cmd.Stdin, cmd.Stderr = tty, &stderr
		if _, err := ctrl.Write([]byte(tc.answer)); err != nil {
			t.Fatal(err)
		}
		err = cmd.Run()
		code := 0
		if err != nil {
			code = cmd.ProcessState.ExitCode()
		}
		if code != tc.code || !strings.Contains(stderr.String(), "Start 1 agents? [y/N]") || (runDir(p) != "") != tc.ran {
			t.Fatalf("answer %q: exit %d, ran %v; want %d, %v\n%s", tc.answer, code, runDir(p) != "", tc.code, tc.ran, stderr.String())
		}
	}
}
