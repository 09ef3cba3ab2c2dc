package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mappedCheck runs in a restricted test child ("mapped"), made
// non-dumpable as a brood child is: a start in a user namespace, whose id
// maps this process could not write (its Landlock domain has no rule under
// /proc), fails before start is called, and the process was never made
// dumpable for it. It prints what went wrong and exits 1, or exits 0.
func mappedCheck() int {
	if err := Undumpable(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := exec.Command("true")
	AddNamespaces(cmd, syscall.CLONE_NEWUSER, nil)
	called, dumpable := false, -1
	err := StartMapped(cmd, func() error {
		called = true
		dumpable, _ = unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		return cmd.Start()
	})
	after, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	switch {
	case called:
		fmt.Fprintf(os.Stderr, "start was called (dumpable %d there, error %v)\n", dumpable, err)
		return 1
	case err == nil || !strings.Contains(err.Error(), "may not write"):
		fmt.Fprintf(os.Stderr, "error %v, want one saying the maps may not be written\n", err)
		return 1
	case after != 0:
		fmt.Fprintf(os.Stderr, "dumpable %d after the refused start\n", after)
		return 1
	}
	return 0
}

// TestStartMappedRefusedUnderLandlock: a confined child's start in a user
// namespace fails early and leaves it non-dumpable (mappedCheck), where
// this unconfined process may write under /proc (procWritable), as the
// maps need.
func TestStartMappedRefusedUnderLandlock(t *testing.T) {
	if err := procWritable(); err != nil {
		t.Fatalf("an unconfined process: %v", err)
	}
	if landlockABI() == 0 {
		t.Skip("kernel has no Landlock: no child is confined by it")
	}
	res := startChild(t, Policy{Writable: []string{t.TempDir()}}, "mapped", nil)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
}

// TestStartMappedSideBySide: in a dumpable process (a root brood) a start
// in a user namespace does not wait for another one in progress, which
// changes nothing either: at K=16 each child's start waited for every
// earlier one's fork and exec. A change of the flag (Undumpable) waits
// for the starts in progress, so none sees the flag change under it.
func TestStartMappedSideBySide(t *testing.T) {
	if v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || v != 1 {
		t.Fatalf("the test process is not dumpable (%d, %v)", v, err)
	}
	mapped := func() *exec.Cmd {
		cmd := exec.Command("true")
		AddNamespaces(cmd, syscall.CLONE_NEWUSER, nil)
		return cmd
	}
	inFirst, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- StartMapped(mapped(), func() error {
			close(inFirst)
			<-release
			return nil
		})
	}()
	<-inFirst
	second := make(chan error, 1)
	go func() { second <- StartMapped(mapped(), func() error { return nil }) }()
	select {
	case err := <-second:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a start in a dumpable process waited for another in progress")
	}
	// A change of the flag waits for the start in progress.
	changed := make(chan struct{})
	go func() {
		dumpableMu.Lock()
		close(changed)
		dumpableMu.Unlock()
	}()
	select {
	case <-changed:
		t.Fatal("the flag's lock was taken for a change while a start held it")
	default:
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	<-changed
}
