package sandbox

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestChildReadsNoTerminal (red team 21 P1-4): no confined child, writer
// or read-only, opens a terminal of the user's read-only (a pty another
// shell reads from: the keystrokes typed there) or a console; it reads
// /dev/null, zero, full, random and urandom. The pty is this test's own,
// which this process opens (the control).
func TestChildReadsNoTerminal(t *testing.T) {
	if landlockABI() == 0 {
		t.Skip("no Landlock here: brood doctor says what holds instead")
	}
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts := "/dev/pts/" + strconv.Itoa(n)
	fd, err := unix.Open(pts, unix.O_RDONLY|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("this process cannot open its own %s: %v", pts, err)
	}
	unix.Close(fd)
	script := "for d in " + pts + " /dev/console /dev/tty0 /dev/ttyS0 /dev/kmsg; do [ -e $d ] && (: < $d) 2>/dev/null && { echo OPENED $d >&2; bad=1; }; done; " +
		"for d in /dev/null /dev/zero /dev/full /dev/random /dev/urandom; do head -c 4 $d >/dev/null || { echo REFUSED $d >&2; bad=1; }; done; exit ${bad:-0}"
	for _, tc := range []struct {
		name string
		p    Policy
	}{
		{"read-only", Policy{ReadOnly: true}},
		{"writer", Policy{Writable: []string{t.TempDir()}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if res := startChild(t, tc.p, script, nil); res.code != 0 {
				t.Errorf("exit %d:\n%s", res.code, res.stderr)
			}
		})
	}
}
