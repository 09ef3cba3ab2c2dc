package pool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/sandbox"
)

// A prototype of a fork server (issue 29, "the fork"), kept as a benchmark
// and a test of what it would promise: a small long-lived helper (this
// test binary, POOL_CHILD=spawner) receives a start request and the
// child's standard streams over a unix socket (SCM_RIGHTS), starts the
// child with CLONE_PARENT, so the child is the root's own and the root
// waits for it and reads its true exit status through a pidfd, and hands
// that pidfd back. The helper's fork copies its few MiB of page tables,
// not the root's; the root pays a socket round trip instead of a fork.
// Nothing of the product uses it (docs/performance.md, "The fork").

// spawnReq is one request: op 's' starts a child (with a user and a mount
// namespace when ns is set), op 'r' asks for the helper's rusage. Its fds
// (stdin, stdout, stderr) ride with it.
type spawnReq struct {
	op   byte
	ns   bool
	exit byte // the child's exit code (sh -c 'exit N'); 0 runs true, 255 sleeps
	id   uint64
}

const spawnReqLen = 11

func (r spawnReq) encode() []byte {
	b := make([]byte, spawnReqLen)
	b[0], b[2] = r.op, r.exit
	if r.ns {
		b[1] = 1
	}
	binary.LittleEndian.PutUint64(b[3:], r.id)
	return b
}

// spawnReply answers a request: the child's pid (its pidfd rides with it)
// or the errno of a failed start, and the helper's CPU and minor faults so
// far.
type spawnReply struct {
	id     uint64
	pid    int64
	errno  int64
	cpuNS  int64
	minflt int64
	pidfd  int
}

const spawnReplyLen = 40

func (r spawnReply) encode() []byte {
	b := make([]byte, spawnReplyLen)
	for i, v := range []int64{int64(r.id), r.pid, r.errno, r.cpuNS, r.minflt} {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	return b
}

func decodeReply(b []byte) spawnReply {
	v := make([]int64, 5)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return spawnReply{id: uint64(v[0]), pid: v[1], errno: v[2], cpuNS: v[3], minflt: v[4], pidfd: -1}
}

// spawnerMain is the helper: it serves requests on fd 3 until the socket
// closes, each start on a locked thread of its own that then dies (where
// the product would put the child's Landlock domain and v1 cgroups).
func spawnerMain() {
	sock := 3
	// Its socket and whatever else it inherited came without close-on-exec
	// (os/exec closes nothing): set it on all of them, or every child it
	// starts holds the helper's socket (and could ask it for starts) and
	// the descriptors its own parent leaked.
	if err := unix.CloseRange(uint(sock), ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		os.Exit(1)
	}
	var send sync.Mutex
	reply := func(r spawnReply) {
		var ru unix.Rusage
		_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
		r.cpuNS = ru.Utime.Nano() + ru.Stime.Nano()
		r.minflt = ru.Minflt
		var oob []byte
		if r.pidfd >= 0 {
			oob = unix.UnixRights(r.pidfd)
		}
		send.Lock()
		_ = unix.Sendmsg(sock, r.encode(), oob, nil, unix.MSG_NOSIGNAL)
		send.Unlock()
		if r.pidfd >= 0 {
			_ = unix.Close(r.pidfd)
		}
	}
	buf, oob := make([]byte, 64), make([]byte, unix.CmsgSpace(3*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != nil || n == 0 {
			os.Exit(0)
		}
		fds := receivedFDs(oob[:oobn])
		if n != spawnReqLen {
			closeAll(fds)
			continue
		}
		req := spawnReq{op: buf[0], ns: buf[1] == 1, exit: buf[2], id: binary.LittleEndian.Uint64(buf[3:])}
		if req.op != 's' || len(fds) != 3 {
			closeAll(fds)
			reply(spawnReply{id: req.id, pidfd: -1})
			continue
		}
		go func() {
			runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
			r := helperStart(req, fds)
			closeAll(fds)
			reply(r)
		}()
	}
}

// helperStart starts req's child with fds as its standard streams, a child
// of the helper's parent (CLONE_PARENT).
func helperStart(req spawnReq, fds []int) spawnReply {
	argv := []string{"/bin/true"}
	if req.exit == 255 {
		argv = []string{"/bin/sleep", "600"}
	} else if req.exit != 0 {
		argv = []string{"/bin/sh", "-c", fmt.Sprintf("exit %d", req.exit)}
	}
	pidfd := -1
	sys := &syscall.SysProcAttr{Setsid: true, Cloneflags: unix.CLONE_PARENT, PidFD: &pidfd}
	if req.ns {
		// As the pool's read-only child: a user and a mount namespace,
		// the helper's own ids mapped to themselves.
		sys.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNS
		sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	}
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{Files: []uintptr{uintptr(fds[0]), uintptr(fds[1]), uintptr(fds[2])}, Sys: sys})
	if err != nil {
		var errno syscall.Errno
		errors.As(err, &errno)
		return spawnReply{id: req.id, errno: int64(max(errno, 1)), pidfd: -1}
	}
	return spawnReply{id: req.id, pid: int64(pid), pidfd: pidfd}
}

func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if got, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

func closeAll(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}

// spawner is the root's side: one socket to a started helper, replies
// routed to their requests by id.
type spawner struct {
	cmd  *exec.Cmd
	sock int
	mu   sync.Mutex
	next uint64
	wait map[uint64]chan spawnReply
}

func startSpawner(t testing.TB) *spawner {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	theirs := os.NewFile(uintptr(pair[1]), "spawner-socket")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "POOL_CHILD=spawner", "GOMAXPROCS=1")
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	s := &spawner{cmd: cmd, sock: pair[0], wait: map[uint64]chan spawnReply{}}
	go s.read()
	t.Cleanup(func() {
		unix.Shutdown(s.sock, unix.SHUT_RDWR)
		_ = cmd.Wait()
		unix.Close(s.sock)
	})
	return s
}

func (s *spawner) read() {
	buf, oob := make([]byte, 64), make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(s.sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != nil || n != spawnReplyLen {
			s.mu.Lock()
			for id, c := range s.wait {
				c <- spawnReply{id: id, errno: int64(unix.EPIPE), pidfd: -1}
				delete(s.wait, id)
			}
			s.mu.Unlock()
			return
		}
		r := decodeReply(buf)
		if fds := receivedFDs(oob[:oobn]); len(fds) == 1 {
			r.pidfd = fds[0]
		}
		s.mu.Lock()
		c := s.wait[r.id]
		delete(s.wait, r.id)
		s.mu.Unlock()
		if c != nil {
			c <- r
		} else if r.pidfd >= 0 {
			unix.Close(r.pidfd)
		}
	}
}

// call sends req with fds (nil for none) and waits for its reply.
func (s *spawner) call(req spawnReq, fds []int) (spawnReply, error) {
	c := make(chan spawnReply, 1)
	s.mu.Lock()
	s.next++
	req.id = s.next
	s.wait[req.id] = c
	s.mu.Unlock()
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(s.sock, req.encode(), oob, nil, unix.MSG_NOSIGNAL); err != nil {
		s.mu.Lock()
		delete(s.wait, req.id)
		s.mu.Unlock()
		return spawnReply{}, fmt.Errorf("send to the spawner: %w", err)
	}
	r := <-c
	if r.errno != 0 {
		return r, fmt.Errorf("spawner: start: %w", syscall.Errno(r.errno))
	}
	return r, nil
}

// si_code of a SIGCHLD: how a child ended.
const (
	cldExited = 1
	cldKilled = 2
	cldDumped = 3
)

// waitPidfd waits for the child a pidfd refers to, which must be this
// process's own (waitid P_PIDFD): how it ended, as the kernel says.
func waitPidfd(pidfd int) (code, status int32, err error) {
	var info unix.Siginfo
	for {
		err = unix.Waitid(unix.P_PIDFD, pidfd, &info, unix.WEXITED, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return 0, 0, fmt.Errorf("waitid pidfd: %w", err)
	}
	// si_code and si_status sit where the kernel puts them for SIGCHLD.
	b := (*[128]byte)(unsafe.Pointer(&info))
	return info.Code, int32(binary.LittleEndian.Uint32(b[24:])), nil
}

// childPipes are a child's three streams: its ends (sent or passed) and
// the parent's.
type childPipes struct{ theirs, ours [3]*os.File }

func newChildPipes() (*childPipes, error) {
	p := &childPipes{}
	for i := range 3 {
		r, w, err := os.Pipe()
		if err != nil {
			p.close()
			return nil, err
		}
		if i == 0 {
			p.theirs[i], p.ours[i] = r, w
		} else {
			p.theirs[i], p.ours[i] = w, r
		}
	}
	return p, nil
}

func (p *childPipes) fds() []int {
	return []int{int(p.theirs[0].Fd()), int(p.theirs[1].Fd()), int(p.theirs[2].Fd())}
}

func (p *childPipes) closeTheirs() {
	for _, f := range p.theirs {
		if f != nil {
			f.Close()
		}
	}
}

func (p *childPipes) close() {
	p.closeTheirs()
	for _, f := range p.ours {
		if f != nil {
			f.Close()
		}
	}
}

// startExec starts /bin/true as the pool does, from a throw-away locked
// thread with os/exec, in a user and a mount namespace when ns (Go then
// forks without vfork), and waits for it. With unshare the child makes
// those namespaces itself after the fork (Unshareflags) and writes its own
// id maps: Go still forks without vfork, though no one waits for the
// parent (syscall/exec_linux.go); built with a syscall package that vforks
// there (docs/performance.md "The fork"), it is the in-process start that
// copies nothing.
func startExec(ns bool, after func()) error { return startExecWith(ns, false, after) }

func startExecWith(ns, unshare bool, after func()) error {
	p, err := newChildPipes()
	if err != nil {
		return err
	}
	defer p.close()
	cmd := exec.Command("/bin/true")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.theirs[0], p.theirs[1], p.theirs[2]
	pidfd := -1
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, PidFD: &pidfd}
	if ns {
		sandbox.AddNamespaces(cmd, syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS, []uintptr{21})
	}
	if unshare {
		unshareNamespaces(cmd.SysProcAttr)
	}
	errc := make(chan error, 1)
	sandbox.OnThrowawayThread(func() { errc <- sandbox.StartMapped(cmd, cmd.Start) })
	if err := <-errc; err != nil {
		return err
	}
	p.closeTheirs()
	defer unix.Close(pidfd)
	after()
	return cmd.Wait()
}

// unshareNamespaces has a child make its own user and mount namespaces
// after the fork, its own ids mapped to themselves, written by itself.
func unshareNamespaces(a *syscall.SysProcAttr) {
	a.Unshareflags, a.Cloneflags = syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS, a.Cloneflags&^(syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS)
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
}

// startHelped has s start /bin/true (exit code exit, when not 0) and
// waits for it through the pidfd it hands back.
func startHelped(s *spawner, ns bool, exit byte, after func()) (code, status int32, err error) {
	p, err := newChildPipes()
	if err != nil {
		return 0, 0, err
	}
	defer p.close()
	r, err := s.call(spawnReq{op: 's', ns: ns, exit: exit}, p.fds())
	if err != nil {
		return 0, 0, err
	}
	p.closeTheirs()
	if r.pidfd < 0 {
		return 0, 0, fmt.Errorf("spawner: no pidfd for pid %d", r.pid)
	}
	defer unix.Close(r.pidfd)
	after()
	return waitPidfd(r.pidfd)
}
