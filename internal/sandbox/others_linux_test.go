package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// othersEnv makes the test binary run othersCheck on the pid it holds:
// the command a confined test child starts (othersCommand).
const othersEnv = "SANDBOX_TEST_OTHERS"

// othersCommand starts, from a confined test child, the test binary as a
// command a child runs for the model (StartCommand) to run othersCheck
// against victim, and returns its exit code.
func othersCommand(victim string) int {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, childEnv+"=") && !strings.HasPrefix(e, childCmdEnv+"=") {
			env = append(env, e)
		}
	}
	cmd.Env = append(env, othersEnv+"="+victim)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	c, err := StartCommand(cmd, false)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the command:", err)
		return 92
	}
	// The child itself sets a limit of a process it started, as a
	// delegating child's pool does (pool.hold): its own filter lets it.
	var lim unix.Rlimit
	own := unix.Getrlimit(unix.RLIMIT_CORE, &lim)
	if own == nil {
		own = unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_CORE, &lim, nil)
	}
	if err := c.Wait(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 92
	}
	if own != nil && !errors.Is(own, unix.ESRCH) {
		fmt.Fprintln(os.Stderr, "the child may not set the limit of a process it started:", own)
		return 1
	}
	return 0
}

// noUser is a uid no process runs as.
const noUser = 2147480000

// othersCheck runs, in a confined test child, the calls that reach
// another process (victim, a pid of the same uid) or the kernel's
// keyrings, and those the child makes on itself, and returns how many did
// not answer as the filter should (each printed on stderr).
func othersCheck(arg string) int {
	victim, err := strconv.Atoi(arg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad pid", arg)
		return 1
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_CORE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "getrlimit:", err)
		return 1
	}
	cpu := unix.Rlimit{Cur: 1, Max: 1}
	raw := func(nr uintptr, a ...uintptr) error {
		var args [6]uintptr
		copy(args[:], a)
		_, _, e := unix.Syscall6(nr, args[0], args[1], args[2], args[3], args[4], args[5])
		if e != 0 {
			return e
		}
		return nil
	}
	session := int32(unix.KEY_SPEC_SESSION_KEYRING)
	name := []byte("user\x00")
	desc := []byte("brood-test\x00")
	payload := []byte("KEY")
	iov := []unix.Iovec{{Base: &payload[0], Len: 1}}
	cases := []struct {
		name string
		want error
		call func() error
	}{
		{"prlimit the victim's CPU", unix.EPERM, func() error { return unix.Prlimit(victim, unix.RLIMIT_CPU, &cpu, nil) }},
		{"prlimit the victim's files", unix.EPERM, func() error {
			return unix.Prlimit(victim, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 3, Max: 3}, nil)
		}},
		{"prlimit its own pid by number", unix.EPERM, func() error { return unix.Prlimit(os.Getpid(), unix.RLIMIT_CORE, &lim, nil) }},
		{"read the victim's limit", nil, func() error { var old unix.Rlimit; return unix.Prlimit(victim, unix.RLIMIT_CPU, nil, &old) }},
		{"setrlimit its own", nil, func() error { return unix.Setrlimit(unix.RLIMIT_CORE, &lim) }},
		{"renice the victim", unix.EPERM, func() error { return unix.Setpriority(unix.PRIO_PROCESS, victim, 19) }},
		// (A user with no process: the filter refuses it by its who;
		// the user 0 means, the caller's, TestFilterProgramAnswers runs
		// on the filter alone, as a real call would renice every process
		// of the uid where it is not held.)
		{"renice a user", unix.EPERM, func() error { return unix.Setpriority(unix.PRIO_USER, noUser, 19) }},
		{"renice itself", nil, func() error { return unix.Setpriority(unix.PRIO_PROCESS, 0, 1) }},
		{"ionice the victim", unix.EPERM, func() error { return raw(unix.SYS_IOPRIO_SET, 1, uintptr(victim), 3<<13) }},
		{"ionice a user", unix.EPERM, func() error { return raw(unix.SYS_IOPRIO_SET, 3, noUser, 3<<13) }},
		{"ionice itself", nil, func() error { return raw(unix.SYS_IOPRIO_SET, 1, 0, 2<<13|7) }},
		{"process_vm_readv", unix.EPERM, func() error {
			return raw(unix.SYS_PROCESS_VM_READV, uintptr(victim), uintptr(unsafe.Pointer(&iov[0])), 1, uintptr(unsafe.Pointer(&iov[0])), 1, 0)
		}},
		{"kcmp", unix.EPERM, func() error { return raw(unix.SYS_KCMP, uintptr(victim), uintptr(os.Getpid()), 0, 0, 0) }},
		{"pidfd_getfd", unix.EPERM, func() error { return raw(unix.SYS_PIDFD_GETFD, 0, 0, 0) }},
		{"keyctl: the session keyring's id", unix.EPERM, func() error {
			_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
			return err
		}},
		{"add_key to the session keyring", unix.EPERM, func() error {
			return raw(unix.SYS_ADD_KEY, uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(&desc[0])),
				uintptr(unsafe.Pointer(&payload[0])), uintptr(len(payload)), uintptr(uint32(session)))
		}},
		{"request_key", unix.EPERM, func() error {
			return raw(unix.SYS_REQUEST_KEY, uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(&desc[0])), 0, 0)
		}},
	}
	bad := 0
	for _, c := range cases {
		if err := c.call(); !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
			fmt.Fprintf(os.Stderr, "%s: %v, want %v\n", c.name, err, c.want)
			bad++
		}
	}
	return bad
}

// TestOtherProcessesOutOfReach (red team 21 P1-2, P2-3): no command of a
// confined child (Bash, its hooks, MCP servers: StartCommand), writer or
// read-only, sets another process's resource limits
// (`prlimit --pid P --cpu=1:1` killed the root brood), renices or
// ionices another process or every process of the user, reads or writes
// another's memory or descriptors, or reaches the kernel keyrings (the
// user's shell's session keyring: Kerberos ccaches, keys that outlive
// it); its own limits, priority and I/O class it still sets, and the
// child's own brood process still sets the limits of a process it
// started (a delegating child's pool). The victim is a plain process of
// the same uid outside the child.
func TestOtherProcessesOutOfReach(t *testing.T) {
	if landlockABI() == 0 || !FilterAvailable() {
		t.Skip("no Landlock or no syscall table here: brood doctor says what holds instead")
	}
	victim := exec.Command("sleep", "300")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	arg := "others " + strconv.Itoa(victim.Process.Pid)
	for _, tc := range []struct {
		name   string
		policy Policy
	}{
		{"read-only", Policy{ReadOnly: true}},
		{"writer", Policy{Writable: []string{t.TempDir()}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if res := startChild(t, tc.policy, arg, nil); res.code != 0 {
				t.Errorf("%d calls answered wrong:\n%s", res.code, res.stderr)
			}
		})
	}
	var lim unix.Rlimit
	if err := unix.Prlimit(victim.Process.Pid, unix.RLIMIT_CPU, nil, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur != unix.RLIM_INFINITY {
		t.Errorf("the victim's CPU limit is %d after the children: one set it", lim.Cur)
	}
}
