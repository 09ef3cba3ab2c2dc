package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// enforcedEnv marks a process image that was started by Restrict from a
// thread that already carried the Landlock domain. Its value is the ABI.
const enforcedEnv = "BROOD_SANDBOX_ENFORCED"

// rulesetAttr is struct landlock_ruleset_attr up to the `scoped` field
// (ABI 6). A smaller kernel struct accepts it as long as the fields it does
// not know are zero, which restrictWith guarantees.
type rulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// landlockABI asks the kernel for its Landlock ABI version; 0 means none.
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// writeAccess is every file-system right that changes something, for a
// given ABI. Reading and executing are never handled, so they stay allowed
// everywhere: a read-only agent must still read the whole tree and run
// programs.
func writeAccess(abi int) uint64 {
	a := uint64(unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if abi >= 2 {
		a |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		a |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	return a
}

// Restrict is called by the child at start-up, before it runs any tool,
// with the policy its envelope names. On success with Landlock it does not
// return in the calling process image: Landlock applies per thread and a Go
// process has many, so Restrict confines the current OS thread and then
// re-executes the program (/proc/self/exe, same arguments and environment)
// from it. The new image inherits the domain on every thread it will ever
// have; its own call to Restrict finds the marker and returns the Status.
// The caller must therefore call Restrict early, before anything it cannot
// repeat (the env marker is removed so grandchildren start clean).
//
// When the kernel lacks Landlock, Restrict returns Mechanism "unavailable"
// and no error: the tool layer still enforces read-only, and the caller
// records the status in its result.
func Restrict(p Policy) (Status, error) {
	return restrictWith(p, landlockABI())
}

// restrictWith is Restrict with the ABI supplied, so the fallback for a
// kernel without Landlock can be exercised on a kernel that has it.
func restrictWith(p Policy, abi int) (Status, error) {
	if v, ok := os.LookupEnv(enforcedEnv); ok {
		os.Unsetenv(enforcedEnv)
		abiText, meta, _ := strings.Cut(v, ",")
		got, _ := strconv.Atoi(abiText)
		return Status{Mechanism: "landlock", ABI: got, NetworkTCP: !p.Network && got >= 4, Metadata: metadataStatus(p, meta == "seccomp")}, nil
	}
	if !p.confinesFS() && (p.Network || abi < 4) {
		st := Status{Mechanism: "none"}
		if !p.Network {
			st.Note = "no Landlock TCP rules on this kernel; network relies on the namespace"
		}
		return st, nil
	}
	if abi < 1 {
		return Status{Mechanism: "unavailable", Note: "kernel has no Landlock; read-only is enforced by the tool layer only"}, nil
	}
	meta, err := restrictThread(p, abi)
	if err != nil {
		return Status{}, err
	}
	exe, err := os.Executable()
	if err != nil {
		return Status{}, fmt.Errorf("sandbox: find own executable to re-exec: %w", err)
	}
	env := append(os.Environ(), enforcedEnv+"="+marker(abi, meta))
	err = syscall.Exec("/proc/self/exe", os.Args, env)
	if err != nil {
		err = syscall.Exec(exe, os.Args, env)
	}
	return Status{}, fmt.Errorf("sandbox: re-exec under landlock: %w", err)
}

// RestrictForChild puts the calling OS thread under p, so that a process
// started from this thread inherits the restriction from its first
// instruction: the parent sandboxes a child without the child re-executing
// itself. The caller must have called runtime.LockOSThread and must let the
// goroutine exit without unlocking (the thread then dies, and no other
// goroutine ever runs on a restricted thread). It returns the environment
// entry the child needs so that its own Restrict call knows it is already
// restricted. needed is false when p asks for nothing the kernel can give.
func RestrictForChild(p Policy) (envEntry string, st Status, needed bool, err error) {
	abi := landlockABI()
	if !p.confinesFS() && (p.Network || abi < 4) {
		return "", Status{Mechanism: "none"}, false, nil
	}
	if abi < 1 {
		return "", Status{Mechanism: "unavailable", Note: "kernel has no Landlock; read-only is enforced by the tool layer only"}, false, nil
	}
	meta, err := restrictThread(p, abi)
	if err != nil {
		return "", Status{}, true, err
	}
	return enforcedEnv + "=" + marker(abi, meta), Status{Mechanism: "landlock", ABI: abi, NetworkTCP: !p.Network && abi >= 4, Metadata: metadataStatus(p, meta)}, true, nil
}

// marker is the value of enforcedEnv: the ABI, and whether the metadata
// filter is installed.
func marker(abi int, seccomp bool) string {
	if seccomp {
		return strconv.Itoa(abi) + ",seccomp"
	}
	return strconv.Itoa(abi)
}

// metadataStatus says for a read-only policy whether the kernel also holds
// metadata (chmod, chown, utimes) read-only.
func metadataStatus(p Policy, seccomp bool) string {
	switch {
	case !p.ReadOnly:
		return ""
	case seccomp:
		return metadataNote
	}
	return "not held by the kernel on this architecture (no seccomp table)"
}

// restrictThread builds the ruleset for p and applies it to the calling
// thread (which it locks and never unlocks: if anything fails after the
// restriction, the thread must not go back to the scheduler). A read-only
// policy also gets the metadata syscall filter; seccomp reports whether it
// was installed.
func restrictThread(p Policy, abi int) (seccomp bool, err error) {
	attr := rulesetAttr{}
	if p.confinesFS() {
		attr.handledFS = writeAccess(abi)
	}
	if !p.Network && abi >= 4 {
		attr.handledNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		// Keep the child from signalling processes outside its own tree
		// (the parent brood, the user's editor) and from reaching abstract
		// unix sockets of host daemons.
		attr.scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return false, fmt.Errorf("sandbox: landlock_create_ruleset: %w", errno)
	}
	rfd := int(fd)
	defer unix.Close(rfd)
	if p.confinesFS() {
		if err := addPathRule(rfd, "/dev/null", unix.LANDLOCK_ACCESS_FS_WRITE_FILE|attr.handledFS&unix.LANDLOCK_ACCESS_FS_TRUNCATE); err != nil {
			return false, err
		}
		for _, dir := range p.Writable {
			if err := addPathRule(rfd, dir, attr.handledFS); err != nil {
				return false, err
			}
		}
	}
	// From here on this goroutine owns the thread, and the thread is never
	// handed back: it carries a domain the rest of the process does not.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return false, fmt.Errorf("sandbox: set no_new_privs: %w", err)
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rfd), 0, 0); errno != 0 {
		return false, fmt.Errorf("sandbox: landlock_restrict_self: %w", errno)
	}
	// Ambient capabilities (granted so a non-root child could mount its
	// overlay) must not reach the tools.
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	if !p.ReadOnly {
		return false, nil
	}
	return installMetadataFilter()
}

// addPathRule allows access beneath path. A path that does not exist is an
// error: a missing writable directory would silently become unwritable.
func addPathRule(rulesetFD int, path string, access uint64) error {
	// O_NOFOLLOW: a writable path may sit in a child-writable directory
	// (its task directory's tmp/), and a rule on a link's target would
	// grant whatever the child pointed it at.
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: open %s for landlock rule: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("sandbox: stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return fmt.Errorf("sandbox: %s is a symbolic link; a landlock rule is never built on one", path)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		// Directory-only rights are refused on a file.
		access &= unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_EXECUTE
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("sandbox: landlock_add_rule %s: %w", path, errno)
	}
	return nil
}

// LandlockABI returns the kernel's Landlock ABI version, 0 without Landlock.
// It is one syscall, cheap enough for every dispatch.
func LandlockABI() int { return landlockABI() }
