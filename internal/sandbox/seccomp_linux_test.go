package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// modesCheck runs, in a confined test child, every call that takes a file
// mode with and without the set-ID bits in dir, and returns how many did
// not answer as the filter should (each printed on stderr).
func modesCheck(dir string) int {
	f, g := filepath.Join(dir, "f"), filepath.Join(dir, "g")
	fd, err := unix.Open(f, unix.O_RDONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open f:", err)
		return 1
	}
	defer unix.Close(fd)
	openat := func(name string, flags int, mode uint32) error {
		fd, err := unix.Openat(unix.AT_FDCWD, filepath.Join(dir, name), flags, mode)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	cases := []struct {
		name string
		want error
		call func() error
	}{
		{"chmod 4755", unix.EPERM, func() error { return unix.Chmod(f, 0o4755) }},
		{"chmod 2755", unix.EPERM, func() error { return unix.Chmod(f, 0o2755) }},
		{"chmod 755", nil, func() error { return unix.Chmod(f, 0o755) }},
		{"fchmod 4755", unix.EPERM, func() error { return unix.Fchmod(fd, 0o4755) }},
		{"fchmodat 6755", unix.EPERM, func() error { return unix.Fchmodat(unix.AT_FDCWD, f, 0o6755, 0) }},
		{"chmod dir 2775", unix.EPERM, func() error { return unix.Chmod(g, 0o2775) }},
		{"openat O_CREAT 4755", unix.EPERM, func() error { return openat("c1", unix.O_CREAT|unix.O_WRONLY, 0o4755) }},
		{"openat O_CREAT 644", nil, func() error { return openat("c2", unix.O_CREAT|unix.O_WRONLY, 0o644) }},
		{"openat O_TMPFILE 2755", unix.EPERM, func() error { return openat(".", unix.O_TMPFILE|unix.O_WRONLY, 0o2755) }},
		{"openat no O_CREAT, stray mode", nil, func() error { return openat("f", unix.O_RDONLY, 0o6777) }},
		{"mkdirat 2775", unix.EPERM, func() error { return unix.Mkdirat(unix.AT_FDCWD, filepath.Join(dir, "d1"), 0o2775) }},
		{"mkdirat 755", nil, func() error { return unix.Mkdirat(unix.AT_FDCWD, filepath.Join(dir, "d2"), 0o755) }},
		{"mknodat S_IFREG|4755", unix.EPERM, func() error {
			return unix.Mknodat(unix.AT_FDCWD, filepath.Join(dir, "n1"), unix.S_IFREG|0o4755, 0)
		}},
		{"openat2", unix.ENOSYS, func() error {
			fd, err := unix.Openat2(unix.AT_FDCWD, f, &unix.OpenHow{Flags: unix.O_RDONLY})
			if err == nil {
				unix.Close(fd)
			}
			return err
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

// TestSetIDModesDenied: no confined child, writer or read-only, can give
// a file or directory a set-user-ID or set-group-ID bit (chmod, fchmod,
// fchmodat, a created file's or directory's mode); openat2, whose mode the
// filter cannot read, answers ENOSYS; and a root child writing to a
// set-ID file clears its bits (CAP_FSETID is out of its bounding set).
func TestSetIDModesDenied(t *testing.T) {
	if landlockABI() == 0 || !FilterAvailable() {
		t.Skip("no Landlock or no syscall table here: brood doctor says what holds instead")
	}
	dir := t.TempDir()
	for _, d := range []string{"g"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := startChild(t, Policy{Writable: []string{dir}}, "modes "+dir, nil); res.code != 0 {
		t.Errorf("writer: %d calls answered wrong:\n%s", res.code, res.stderr)
	}
	walkSetID(t, dir)

	suid := filepath.Join(dir, "suid")
	if err := os.WriteFile(suid, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(suid, 0o4755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	res := startChild(t, Policy{Writable: []string{dir}}, "chmod u+s "+dir+"/f 2>/dev/null && exit 3; echo >> "+suid, nil)
	if res.code != 0 {
		t.Errorf("writer shell: exit %d (3: chmod u+s went through): %s", res.code, res.stderr)
	}
	fi, err := os.Stat(suid)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSetuid != 0 {
		t.Errorf("a child's write left %s set-user-ID (%v): CAP_FSETID still held", suid, fi.Mode())
	}
}

// walkSetID fails the test for any file under dir with a set-ID bit.
func walkSetID(t *testing.T, dir string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			t.Errorf("%s has mode %v", p, fi.Mode())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// tsyncConflictEnv makes the test binary a child that puts one of its
// threads under a filter of its own, then asks filterEveryThread for every
// thread (tsyncConflictChild).
const tsyncConflictEnv = "SANDBOX_TEST_TSYNC_CONFLICT"

// tsyncConflictChild: with one thread under another filter, the filter
// for every thread fails, names that thread and is installed on no
// thread (the caller's own included). It prints what went wrong and
// exits 1, or exits 0.
func tsyncConflictChild() int {
	prog, ok := filterFor(false)
	if !ok {
		fmt.Fprintln(os.Stderr, "no filter for this architecture")
		return 1
	}
	other := make(chan int)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread() // the thread dies with the goroutine: never unlocked
		allow := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW}}
		fp := unix.SockFprog{Len: 1, Filter: &allow[0]}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			fmt.Fprintln(os.Stderr, "no_new_privs:", err)
			other <- -1
			return
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fp))); e != 0 {
			fmt.Fprintln(os.Stderr, "own filter:", e)
			other <- -1
			return
		}
		other <- unix.Gettid()
		<-release
	}()
	tid := <-other
	defer close(release)
	if tid < 0 {
		return 1
	}
	runtime.LockOSThread()
	err := filterEveryThread(prog)
	status, _ := os.ReadFile("/proc/thread-self/status")
	switch {
	case err == nil:
		fmt.Fprintln(os.Stderr, "filterEveryThread installed past a thread under another filter")
		return 1
	case !strings.Contains(err.Error(), fmt.Sprintf("thread %d ", tid)):
		fmt.Fprintf(os.Stderr, "error %q does not name thread %d\n", err, tid)
		return 1
	case !strings.Contains(string(status), "Seccomp:\t0\n"):
		fmt.Fprintln(os.Stderr, "the calling thread took the filter although the call failed")
		return 1
	}
	return 0
}

// TestFilterEveryThreadRefusesAThreadItCannotSync: where one thread is
// under a filter of its own, SECCOMP_FILTER_FLAG_TSYNC installs nothing
// and says which thread; filterEveryThread reports it as an error rather
// than a filter on some threads.
func TestFilterEveryThreadRefusesAThreadItCannotSync(t *testing.T) {
	if !FilterAvailable() {
		t.Skip("no syscall table here: no filter is installed on any thread")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), tsyncConflictEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}

// rawCheck makes, in a confined test child, each syscall "NR=ERRNO" names
// with zero arguments, and returns how many did not fail with that errno
// ("NR!=ERRNO": with any other outcome), each printed on stderr.
func rawCheck(args []string) int {
	bad := 0
	for _, a := range args {
		not := strings.Contains(a, "!=")
		nr, name, _ := strings.Cut(strings.Replace(a, "!=", "=", 1), "=")
		var n uintptr
		fmt.Sscan(nr, &n)
		want := map[string]unix.Errno{"EPERM": unix.EPERM, "ENOSYS": unix.ENOSYS}[name]
		_, _, errno := unix.Syscall6(n, 0, 0, 0, 0, 0, 0)
		if (errno == want) == not {
			fmt.Fprintf(os.Stderr, "syscall %d: %v, want %s\n", n, errno, a)
			bad++
		}
	}
	return bad
}

// TestNewerSyscallsDenied: file_setattr (Linux 6.17: chattr's flags by
// path, which the red team used to set a read-only child's file's
// attributes past the ioctl rule) is a metadata call a read-only child may
// not make; open_tree_attr no confined child may; and any call newer than
// the table answers ENOSYS, as on a kernel that lacks it, so the next such
// call is not open until someone reviews it.
func TestNewerSyscallsDenied(t *testing.T) {
	if landlockABI() == 0 || !FilterAvailable() {
		t.Skip("no Landlock or no syscall table here: brood doctor says what holds instead")
	}
	setattr, treeAttr := unix.SYS_FILE_SETATTR, unix.SYS_OPEN_TREE_ATTR
	newer := lastReviewed + 1
	cases := []struct {
		name   string
		policy Policy
		calls  string
	}{
		{"read-only", Policy{ReadOnly: true}, fmt.Sprintf("raw %d=EPERM %d=EPERM %d=ENOSYS 1000=ENOSYS", setattr, treeAttr, newer)},
		{"writer", Policy{Writable: []string{t.TempDir()}}, fmt.Sprintf("raw %d!=EPERM %d=EPERM %d=ENOSYS", setattr, treeAttr, newer)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if res := startChild(t, tc.policy, tc.calls, nil); res.code != 0 {
				t.Errorf("%d calls answered wrong:\n%s", res.code, res.stderr)
			}
		})
	}
}

// TestFilterProgramAnswers runs the filter's BPF program itself (x/net's
// BPF machine) on the seccomp data of calls the running kernel cannot show:
// one newer than the table answers ENOSYS whatever kernel runs it.
func TestFilterProgramAnswers(t *testing.T) {
	const (
		deny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		nosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		allow = unix.SECCOMP_RET_ALLOW
	)
	cases := []struct {
		readOnly bool
		nr       uint32
		want     uint32
		args     []uint64
	}{
		{true, unix.SYS_FILE_SETATTR, deny, nil}, {false, unix.SYS_FILE_SETATTR, allow, nil},
		{true, unix.SYS_OPEN_TREE_ATTR, deny, nil}, {false, unix.SYS_OPEN_TREE_ATTR, deny, nil},
		{true, lastReviewed + 1, nosys, nil}, {false, lastReviewed + 1, nosys, nil}, {false, 4000, nosys, nil},
		{true, unix.SYS_GETPID, allow, nil}, {false, unix.SYS_READ, allow, nil},
		// Another process's resources (othersFilter): the user's every
		// process (which PRIO_USER, IOPRIO_WHO_USER, who 0: the caller's
		// uid), another pid, a new limit's pointer in its high half.
		{false, unix.SYS_SETPRIORITY, deny, []uint64{unix.PRIO_USER, 0, 19}},
		{true, unix.SYS_SETPRIORITY, deny, []uint64{unix.PRIO_PROCESS, 4242, 19}},
		{false, unix.SYS_SETPRIORITY, allow, []uint64{unix.PRIO_PROCESS, 0, 19}},
		{false, unix.SYS_SETPRIORITY, allow, []uint64{unix.PRIO_PGRP, 0, 19}},
		{false, unix.SYS_IOPRIO_SET, deny, []uint64{3, 0, 3 << 13}},
		{true, unix.SYS_IOPRIO_SET, deny, []uint64{1, 4242, 3 << 13}},
		{false, unix.SYS_IOPRIO_SET, allow, []uint64{1, 0, 3 << 13}},
		{false, unix.SYS_PRLIMIT64, deny, []uint64{4242, unix.RLIMIT_CPU, 0x7f0000001000, 0}},
		{false, unix.SYS_PRLIMIT64, deny, []uint64{4242, unix.RLIMIT_CPU, 0x100000000, 0}},
		{true, unix.SYS_PRLIMIT64, allow, []uint64{4242, unix.RLIMIT_CPU, 0, 0x7f0000001000}},
		{false, unix.SYS_PRLIMIT64, allow, []uint64{0, unix.RLIMIT_CPU, 0x7f0000001000, 0}},
		{true, unix.SYS_KEYCTL, deny, nil}, {false, unix.SYS_ADD_KEY, deny, nil},
		{false, unix.SYS_PRLIMIT64, allow, nil}, {true, unix.SYS_SETPRIORITY, allow, nil},
	}
	for _, tc := range cases {
		prog, ok := filterFor(tc.readOnly)
		if !ok {
			t.Skip("no syscall table for this architecture")
		}
		if tc.args != nil {
			// Another process's resources: its commands' filter
			// (OwnProcessForCommand), not the brood child's own (it
			// sets its children's limits).
			prog = ownProcessFilter()
		}
		raw := make([]bpf.RawInstruction, len(prog))
		for i, f := range prog {
			raw[i] = bpf.RawInstruction{Op: f.Code, Jt: f.Jt, Jf: f.Jf, K: f.K}
		}
		ins, ok := bpf.Disassemble(raw)
		if !ok {
			t.Fatal("the filter does not disassemble")
		}
		vm, err := bpf.NewVM(ins)
		if err != nil {
			t.Fatal(err)
		}
		// struct seccomp_data (nr, arch, ip, args[6]), its words big
		// endian: the machine loads as a socket filter does, where the
		// kernel loads seccomp's in the host's order.
		data := make([]byte, 64)
		binary.BigEndian.PutUint32(data[0:], tc.nr)
		binary.BigEndian.PutUint32(data[4:], nativeArch)
		for i, a := range tc.args {
			// args[i]: its low half first, as the kernel lays it out
			// on a little-endian machine.
			binary.BigEndian.PutUint32(data[16+8*i:], uint32(a))
			binary.BigEndian.PutUint32(data[20+8*i:], uint32(a>>32))
		}
		got, err := vm.Run(data)
		if err != nil || uint32(got) != tc.want {
			t.Errorf("read-only %v, syscall %d %v: %#x (%v), want %#x", tc.readOnly, tc.nr, tc.args, got, err, tc.want)
		}
	}
}
