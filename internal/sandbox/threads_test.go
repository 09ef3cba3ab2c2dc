//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	// forceReexecEnv makes the test child's in-place restrictor answer
	// ENOTSUP, as it does in a binary that links runtime/cgo.
	forceReexecEnv = "SANDBOX_TEST_FORCE_REEXEC"
	// mountFirstEnv makes the test child mount a tmpfs there before it
	// restricts itself, as an overlay child mounts its copy.
	mountFirstEnv = "SANDBOX_TEST_MOUNT_FIRST"
	// abiCapEnv makes the test child restrict itself as on a kernel of at
	// most that Landlock ABI (5: no scope, so a child prepared for its
	// mounts confines every thread in place).
	abiCapEnv = "SANDBOX_TEST_ABI"
)

// childABI is the Landlock ABI the test child restricts itself with: the
// kernel's, or abiCapEnv's where that is lower.
func childABI() int {
	abi := landlockABI()
	if n, err := strconv.Atoi(os.Getenv(abiCapEnv)); err == nil && n < abi {
		return n
	}
	return abi
}

// threadsCheck runs in a restricted test child ("threads TREE SCRATCH
// PARENTPID MOUNTPOINT"): from many OS threads at once it tries to write
// TREE (must fail) and SCRATCH (must work); a process started from one
// thread is killed from another (the per-thread layers must not scope
// each other); the parent is out of reach (the base's scope); a second
// mount is refused; and a non-root child holds no capability on any
// thread. It prints what went wrong and exits 1, or exits 0.
func threadsCheck(args []string) int {
	tree, scratch, mnt := args[0], args[1], args[3]
	parent, _ := strconv.Atoi(args[2])
	var mu sync.Mutex
	var bad []string
	fail := func(f string, a ...any) { mu.Lock(); bad = append(bad, fmt.Sprintf(f, a...)); mu.Unlock() }
	var wg sync.WaitGroup
	const n = 12
	sleepers := make(chan *exec.Cmd, n)
	for i := range n {
		wg.Go(func() {
			runtime.LockOSThread() // n distinct threads, held while the others run
			defer runtime.UnlockOSThread()
			tid := unix.Gettid()
			if err := os.WriteFile(filepath.Join(tree, fmt.Sprintf("t%d", i)), []byte("x"), 0o600); err == nil {
				fail("thread %d wrote the tree", tid)
			}
			if err := os.WriteFile(filepath.Join(scratch, fmt.Sprintf("t%d", i)), []byte("x"), 0o600); err != nil {
				fail("thread %d could not write its scratch dir: %v", tid, err)
			}
			if status, err := os.ReadFile("/proc/thread-self/status"); err == nil && os.Geteuid() != 0 && !strings.Contains(string(status), "CapEff:\t0000000000000000") {
				fail("thread %d kept capabilities", tid)
			}
			cmd := exec.Command("sleep", "30")
			if err := cmd.Start(); err != nil {
				fail("thread %d: start: %v", tid, err)
				return
			}
			sleepers <- cmd
		})
	}
	wg.Wait()
	close(sleepers)
	// Each sleeper is killed from this goroutine's thread (another one
	// than most of them started from).
	runtime.LockOSThread()
	for cmd := range sleepers {
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			fail("kill a process started from another thread: %v", err)
		}
		cmd.Wait()
	}
	if childABI() >= 6 {
		if err := syscall.Kill(parent, 0); err == nil {
			fail("the parent (%d) could be signalled", parent)
		}
	}
	if mnt != "-" {
		if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, ""); err == nil {
			fail("a second mount worked after the restriction")
		}
	}
	if len(bad) > 0 {
		fmt.Fprintln(os.Stderr, strings.Join(bad, "\n"))
		return 1
	}
	return 0
}

// startOnBase starts the test child as brood starts an overlay child: from
// a throw-away thread prepared for a child that mounts first
// (BaseForChild: no Landlock domain), in new user and mount namespaces
// with CAP_SYS_ADMIN kept for a non-root user.
func startOnBase(t testing.TB, p Policy, command string, env ...string) childResult {
	t.Helper()
	var stdout, stderr strings.Builder
	err := runOnBase(t, p, command, &stdout, &stderr, env...)
	return childResultOf(t, err, stdout.String(), stderr.String())
}

// bareBase, among startOnBase's env, starts the child as BaseForChild
// would but without no_new_privs on its starting thread, which the
// child's own Restrict must then set on every thread.
const bareBase = "SANDBOX_TEST_BARE_BASE=1"

// runOnBase is startOnBase up to the child's exit: what its Wait said.
func runOnBase(t testing.TB, p Policy, command string, stdout, stderr *strings.Builder, env ...string) error {
	t.Helper()
	return runOnBaseWith(t, p, command, stdout, stderr, nil, env...)
}

// runOnBaseWith is runOnBase with configure (if not nil) called on the
// command before it starts (LayerForChild).
func runOnBaseWith(t testing.TB, p Policy, command string, stdout, stderr *strings.Builder, configure func(*exec.Cmd), env ...string) error {
	t.Helper()
	pol, _ := json.Marshal(p)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+string(pol), childCmdEnv+"="+command), env...)
	AddNamespaces(cmd, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS, []uintptr{unix.CAP_SYS_ADMIN})
	if configure != nil {
		configure(cmd)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	errc := make(chan error, 1)
	OnThrowawayThread(func() {
		var entry string
		var err error
		if slices.Contains(env, bareBase) {
			entry, err = baseEnv+"="+marker{abi: landlockABI()}.String(), clearInheritableThread()
		} else {
			entry, err = BaseForChild(p)
		}
		if err != nil {
			errc <- err
			return
		}
		cmd.Env = append(cmd.Env, entry)
		errc <- StartMapped(cmd, cmd.Start)
	})
	if err := <-errc; err != nil {
		t.Fatalf("start on base: %v", err)
	}
	return cmd.Wait()
}

// TestRestrictAfterMount: a child its parent prepared for its mounts
// (BaseForChild) mounts, as an overlay child does, then confines itself.
// A writer (no Landlock domain from its parent) applies its whole domain:
// by re-executing where it has a scope (its threads must share it), in
// place on every thread where it has none (ABI 5 here). A read-only child
// (a base domain holding the scope) adds its file-system layer in place.
// Both re-execute in a binary with cgo (forced here, so both paths run in
// every build). Either way every
// thread is held, processes started from one thread can be killed from
// another, the parent is out of reach (with a scope) and no capability is
// left to a non-root child.
func TestRestrictAfterMount(t *testing.T) {
	abi := landlockABI()
	if abi == 0 {
		t.Skip("kernel has no Landlock; TestRestrictWithoutLandlock covers the fallback")
	}
	inPlace := "re-exec"
	if InPlace() {
		inPlace = "all threads"
	}
	wantVia := inPlace
	if abi >= 6 {
		wantVia = "re-exec"
	}
	t.Logf("this binary restricts in place: %v", InPlace())
	for _, tt := range []struct {
		name, via string
		abi       int
		readOnly  bool
		env       []string
	}{
		{"writer", wantVia, abi, false, nil},
		{"writer, no scope, ABI 5", inPlace, min(abi, 5), false, []string{abiCapEnv + "=5"}},
		{"writer, forced re-exec", "re-exec", abi, false, []string{forceReexecEnv + "=1"}},
		// Its base holds the scope: never a second start.
		{"read-only", inPlace, abi, true, nil},
		{"read-only, forced re-exec", "re-exec", abi, true, []string{forceReexecEnv + "=1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tree, scratch, mnt := t.TempDir(), t.TempDir(), t.TempDir()
			p := Policy{ReadOnly: tt.readOnly, Writable: []string{scratch}}
			res := startOnBase(t, p, fmt.Sprintf("threads %s %s %d %s", tree, scratch, os.Getpid(), mnt), append(tt.env, mountFirstEnv+"="+mnt)...)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			if res.status.Mechanism != "landlock" || res.status.Via != tt.via || res.status.ABI != tt.abi {
				t.Errorf("status %v (via %q), want landlock via %q", res.status, res.status.Via, tt.via)
			}
			if entries, _ := os.ReadDir(tree); len(entries) > 0 {
				t.Errorf("the tree was written: %v", entries)
			}
		})
	}
}

// TestReadOnlyOnBase: a read-only child on a base domain keeps its
// metadata filter and its TCP ban on every thread, in either path.
func TestReadOnlyOnBase(t *testing.T) {
	abi := landlockABI()
	if abi < 4 {
		t.Skip("kernel Landlock ABI < 4: no TCP rules to check; TestReadOnlyChildCannotWrite covers the rest")
	}
	if _, ok := metadataFilter(); !ok {
		t.Skip("no syscall table for this architecture")
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, env := range [][]string{nil, {forceReexecEnv + "=1"}} {
		res := startOnBase(t, Policy{ReadOnly: true}, "chmod +x "+file+" || exit 3; exit 0", env...)
		if res.code != 3 || res.status.Metadata != metadataNote || !res.status.NetworkTCP {
			t.Errorf("%v: exit %d, status %+v: %s", env, res.code, res.status, res.stderr)
		}
	}
	if st, _ := os.Stat(file); st.Mode()&0o111 != 0 {
		t.Error("chmod went through")
	}
}
