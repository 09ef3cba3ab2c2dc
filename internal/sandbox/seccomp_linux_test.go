package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

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
