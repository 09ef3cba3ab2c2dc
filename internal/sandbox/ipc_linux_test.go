package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestChildWithoutIPCNamespaceHasNoSysVIPC (red team 21 P1-3): a child
// started where it gets no IPC namespace of its own (OwnIPC could not
// give one) makes no System V IPC call (shmget, shmat, msgget, semget:
// EPERM); one in a user namespace gets an IPC namespace (OwnIPC) and
// keeps them.
func TestChildWithoutIPCNamespaceHasNoSysVIPC(t *testing.T) {
	if !FilterAvailable() {
		t.Skip("no syscall table for this architecture")
	}
	run := func(t *testing.T, cmd *exec.Cmd, calls string) childResult {
		pol, _ := json.Marshal(Policy{})
		cmd.Env = append(os.Environ(), childEnv+"="+string(pol), childCmdEnv+"="+calls)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		started := make(chan error, 1)
		OnThrowawayThread(func() {
			err := NamespacesOnThread(cmd)
			if err == nil {
				err = SharedIPCOnThread(cmd)
			}
			if err == nil {
				err = cmd.Start()
			}
			started <- err
		})
		err := <-started
		if err == nil {
			err = cmd.Wait()
		}
		return childResultOf(t, err, stdout.String(), stderr.String())
	}
	ipc := []int{unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_MSGGET, unix.SYS_SEMGET}
	calls := func(op string) string {
		s := "raw"
		for _, nr := range ipc {
			s += fmt.Sprintf(" %d%sEPERM", nr, op)
		}
		return s
	}
	t.Run("host's IPC namespace", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		if res := run(t, cmd, calls("=")); res.code != 0 {
			t.Errorf("%d System V calls went through:\n%s", res.code, res.stderr)
		}
	})
	t.Run("own IPC namespace", func(t *testing.T) {
		if err := TryUserNS(t.Context()); err != nil {
			t.Skipf("no user namespaces here: %v", err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		AddNamespaces(cmd, syscall.CLONE_NEWUSER, nil)
		OwnIPC(cmd)
		if cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWIPC == 0 {
			t.Fatal("OwnIPC gave a child in a user namespace no IPC namespace")
		}
		if res := run(t, cmd, calls("!=")); res.code != 0 {
			t.Errorf("%d System V calls refused in the child's own IPC namespace:\n%s", res.code, res.stderr)
		}
	})
}
