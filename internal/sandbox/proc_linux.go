package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// ownProcVar asks a child started as the init of a PID namespace of its
// own, in a mount namespace of its own, to mount a /proc of that PID
// namespace over /proc before anything else (MountOwnProc). Its value is
// the inode of the parent's mount namespace: the child mounts nothing
// where that is still its own (a mount there would change the parent's
// /proc).
const ownProcVar = "BROOD_OWN_PROC"

// AskOwnProc is called by the pool for a child it starts in a new PID
// namespace (cmd's CLONE_NEWPID): the child gets a mount namespace of its
// own too and is asked to mount a /proc of its PID namespace, so that it
// and every command it runs see only their own processes (ps, /proc/self
// and /proc/PID of its own numbering), never the host's command lines. It
// asks only a child started in a new user namespace (cmd's id maps): that
// one is not under Landlock file-system rules before its own start
// (isolate.ConfineChildRD starts it from a base domain or none), which
// would refuse the mount. It reports whether it asked.
func AskOwnProc(cmd *exec.Cmd) bool {
	a := cmd.SysProcAttr
	if a == nil || a.Cloneflags&syscall.CLONE_NEWPID == 0 || a.Cloneflags&syscall.CLONE_NEWUSER == 0 || len(a.UidMappings) == 0 {
		return false
	}
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/mnt", &st); err != nil {
		return false
	}
	a.Cloneflags |= syscall.CLONE_NEWNS
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, ownProcVar+"="+strconv.FormatUint(st.Ino, 10))
	return true
}

// MountOwnProc is the child's side of AskOwnProc, first thing in its
// main (isolate.EnterFromEnv): where it was asked and is the init of its
// PID namespace (pid 1) in a mount namespace that is not its parent's, it
// makes every mount private and mounts a fresh proc over /proc, with the
// flags the one below has and nosuid, nodev, noexec. The host's /proc is
// left beneath it, out of reach: the child's capabilities, its Landlock
// domain and its syscall filter refuse unmounting. The request is removed
// from the environment either way: nothing the child starts acts on it.
func MountOwnProc() error {
	v, ok := os.LookupEnv(ownProcVar)
	if !ok {
		return nil
	}
	os.Unsetenv(ownProcVar)
	if os.Getpid() != 1 {
		return nil // not the process the pool started: not its to mount
	}
	parent, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("sandbox: bad %s %q: a /proc of its own was asked for by no parent of brood's", ownProcVar, v)
	}
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/mnt", &st); err != nil {
		return fmt.Errorf("sandbox: read /proc/self/ns/mnt to mount a /proc of its own: %w", err)
	}
	if st.Ino == parent {
		return fmt.Errorf("sandbox: a /proc of its own asked for in its parent's mount namespace: not mounted")
	}
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("sandbox: make mounts private before mounting a /proc of its own: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", procFlags(), ""); err != nil {
		return fmt.Errorf("sandbox: mount a /proc of its own PID namespace: %w", err)
	}
	return os.Setenv(ownProcMounted, "1")
}

// ownProcMounted is set by MountOwnProc once this process mounted its own
// /proc, and taken by takeLayer: the parent's Layer (built on the host's
// /proc) is given a read rule on it (ownProcRule).
const ownProcMounted = "BROOD_OWN_PROC_MOUNTED"

// ownProcRule adds to rfd, the parent's Layer (LayerForChild), the read
// rule on /proc that the Layer holds on the host's: Landlock rules are on
// inodes, the Layer's on the host's /proc root, which a path in the /proc
// this process mounted never crosses (Landlock skips the mount points
// beneath a mount), so without it every file of its own /proc would be
// unreadable. The Layer hides paths outside /proc only (another project's
// .brood); the rule grants nothing the host's /proc did not. The ruleset
// is shared with the parent's other children: the rule is on this
// process's own /proc root, which no other child reaches. It stays in that
// ruleset for the parent's life, one rule per child started (a rule is
// never removed; its object is released with that /proc): bounded by the
// children a parent starts, left so (review prochide P3-5).
func ownProcRule(rfd int) error {
	if _, ok := os.LookupEnv(ownProcMounted); !ok {
		return nil
	}
	os.Unsetenv(ownProcMounted)
	return addPathRule(rfd, "/proc", unix.LANDLOCK_ACCESS_FS_READ_FILE)
}

// procFlags are the mount flags of the /proc now mounted (which a mount in
// a user namespace may not loosen) with nosuid, nodev and noexec.
func procFlags() uintptr {
	flags := uintptr(unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	var sf unix.Statfs_t
	if unix.Statfs("/proc", &sf) != nil {
		return flags
	}
	for _, f := range []struct{ st, ms int64 }{
		{unix.ST_RDONLY, unix.MS_RDONLY},
		{unix.ST_NOATIME, unix.MS_NOATIME},
		{unix.ST_NODIRATIME, unix.MS_NODIRATIME},
		{unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if sf.Flags&f.st != 0 {
			flags |= uintptr(f.ms)
		}
	}
	return flags
}
