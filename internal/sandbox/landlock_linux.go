package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// enforcedEnv marks a process image that was started from a thread that
// already carried its whole Landlock domain (RestrictForChild, or Restrict's
// re-exec). Its value is a marker.
const enforcedEnv = "BROOD_SANDBOX_ENFORCED"

// baseEnv marks a child its parent prepared for its mounts (BaseForChild):
// it applies its Landlock domain, or what its base does not hold, itself,
// after them. Its value is a marker.
const baseEnv = "BROOD_SANDBOX_BASE"

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
// with the policy its envelope names. Landlock applies per thread and a Go
// process has many, so there are three ways in, and the Status says which
// one ran (Via):
//
//   - "parent": the parent started this process from a thread already under
//     p (RestrictForChild). Restrict finds the marker and returns.
//   - "all threads": the parent prepared it for its mounts (BaseForChild):
//     a read-only child, started in a base domain that holds p's scope and
//     TCP ban, adds its file-system layer; a writer, started with no
//     domain, applies its whole domain where that has no scope bit (ABI 5
//     and below). Restrict applies the layer to every thread in place with
//     AllThreadsSyscall, with no_new_privs, the metadata filter of a
//     read-only policy and the dropped capabilities. Each thread then has
//     a sibling domain of its own, which only Landlock's scope tells apart
//     (it compares domains: a thread could not signal a process another
//     thread started), so a layer with scope never goes this way. It needs
//     a binary without cgo.
//   - "re-exec": otherwise (a writer's domain with scope, no mark of the
//     parent's, or a binary that links runtime/cgo, where
//     AllThreadsSyscall returns ENOTSUP) Restrict confines the current OS
//     thread and re-executes the program (/proc/self/exe, same arguments
//     and environment) from it;
//     the new image inherits the one domain on every thread it will ever
//     have, and its own call to Restrict finds the marker (and, for a
//     writer's, cuts the capabilities its bounding set kept: reexecKeeps). The caller must
//     therefore call Restrict early, before anything it cannot repeat (the
//     env markers are removed so grandchildren start clean).
//
// When the kernel lacks Landlock, Restrict returns Mechanism "unavailable"
// and no error: the tool layer still enforces read-only, and the caller
// records the status in its result.
func Restrict(p Policy) (Status, error) {
	return restrictWith(p, landlockABI(), allThreads)
}

// restrictWith is Restrict with the ABI and the in-place restrictor
// supplied, so the fallbacks (a kernel without Landlock, a binary with cgo)
// can be exercised where the kernel and the build offer more.
func restrictWith(p Policy, abi int, inPlace func(rfd int, p Policy) (bool, error)) (Status, error) {
	p = takeHidden(p)
	p, err := takeLayer(p)
	if err != nil {
		return Status{}, err
	}
	defer p.Layer.Close()
	if v, ok := os.LookupEnv(enforcedEnv); ok {
		os.Unsetenv(enforcedEnv)
		os.Unsetenv(baseEnv)
		m := parseMarker(v)
		st := Status{Mechanism: "landlock", ABI: m.abi, NetworkTCP: !p.Network && m.abi >= 4, Via: m.via}
		if m.admin {
			// A writer's re-exec kept CAP_SYS_ADMIN and CAP_SETPCAP in
			// its bounding set for its own children's namespaces: cut
			// them as an in-place child does (reexecKeeps).
			if err := capsEveryThread(); err != nil {
				return Status{}, err
			}
		}
		if p.confinesFS() {
			// The thread this process was started from cut its bounding
			// set (the marker says so); an older parent's did not.
			dropped := m.caps || dropBoundingAll() == nil
			st.fill(p, m.seccomp, dropped)
		}
		return st, nil
	}
	baseText, based := os.LookupEnv(baseEnv)
	os.Unsetenv(baseEnv)
	base := parseMarker(baseText)
	if based && (base.scope || base.tcp) {
		return restrictOnBase(p, base, inPlace)
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
	l := fullLayer(p, abi)
	if based && l.fs && !l.scope {
		return restrictInPlace(p, abi, l, l.net, inPlace)
	}
	if based && l.fs {
		return reexec(p, abi, l, reexecKeeps())
	}
	return reexec(p, abi, l, 0)
}

// reexecKeeps is what a writer that mounts first keeps in its bounding set
// when it re-executes (root, in a binary that can reach every thread):
// CAP_SYS_ADMIN, so that its own children still get their PID namespaces,
// and CAP_SETPCAP, as a child confined in place keeps them permitted
// (capsEveryThread). Under no_new_privs the re-executed image could not
// get back what the bounding set lost; it cuts them itself, on every
// thread, at its Restrict (the marker's "admin"). Elsewhere it is none.
func reexecKeeps() uint64 {
	if os.Geteuid() != 0 || !InPlace() {
		return 0
	}
	return 1<<unix.CAP_SYS_ADMIN | 1<<unix.CAP_SETPCAP
}

// restrictOnBase adds the file-system layer to a read-only child whose
// parent put it in a base domain (BaseForChild: the scope, the TCP ban).
func restrictOnBase(p Policy, base marker, inPlace func(rfd int, p Policy) (bool, error)) (Status, error) {
	if !p.confinesFS() {
		return Status{Mechanism: "landlock", ABI: base.abi, NetworkTCP: base.tcp, Via: "parent"}, nil
	}
	return restrictInPlace(p, base.abi, layer{fs: true}, base.tcp, inPlace)
}

// restrictInPlace puts every thread of a process its parent prepared for
// its mounts (BaseForChild) under layer l of p in place, or re-executes
// where that cannot be done (a binary with cgo). l has no scope bit: each
// thread gets a sibling domain of its own (allThreads). tcp says whether
// the process's domain holds the TCP ban (l's or its base's).
func restrictInPlace(p Policy, abi int, l layer, tcp bool, inPlace func(rfd int, p Policy) (bool, error)) (Status, error) {
	rfd, err := buildRuleset(p, abi, l)
	if err != nil {
		return Status{}, err
	}
	seccomp, err := inPlace(rfd, p)
	unix.Close(rfd)
	if errors.Is(err, unix.ENOTSUP) {
		return reexec(p, abi, l, 0)
	}
	if err != nil {
		return Status{}, err
	}
	st := Status{Mechanism: "landlock", ABI: abi, NetworkTCP: tcp, Via: "all threads"}
	st.fill(p, seccomp, true)
	return st, nil
}

// Reexecuted reports whether this process image is Restrict's re-exec of
// itself (the "re-exec" way in): its arguments are its first image's, and
// whatever that image consumed before Restrict (a warm child's start line)
// is not there to be read again. Call it before Restrict, which removes the
// marker.
func Reexecuted() bool {
	v, ok := os.LookupEnv(enforcedEnv)
	return ok && parseMarker(v).via == "re-exec"
}

// reexec confines the calling thread with layer l of p and re-executes the
// program from it, its bounding set cut to keptCaps and keep; it returns
// only on failure.
func reexec(p Policy, abi int, l layer, keep uint64) (Status, error) {
	meta, err := restrictThread(p, abi, l, keep)
	if err != nil {
		return Status{}, err
	}
	exe, err := os.Executable()
	if err != nil {
		return Status{}, fmt.Errorf("sandbox: find own executable to re-exec: %w", err)
	}
	env := append(os.Environ(), enforcedEnv+"="+marker{abi: abi, seccomp: meta, caps: l.fs, admin: keep != 0, via: "re-exec"}.String())
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
	meta, err := restrictThread(p, abi, fullLayer(p, abi), 0)
	if err != nil {
		return "", Status{}, true, err
	}
	m := marker{abi: abi, seccomp: meta, caps: p.confinesFS(), via: "parent"}
	st = Status{Mechanism: "landlock", ABI: abi, NetworkTCP: !p.Network && abi >= 4, Via: m.via}
	if p.confinesFS() {
		st.fill(p, meta, true)
	}
	return enforcedEnv + "=" + m.String(), st, true, nil
}

// BaseForChild prepares the calling OS thread to start a child that must
// mount before its Landlock domain: an overlay child (its copy), an
// in-place writer and a read-only child of the root (their views), any
// child in a new user namespace (this thread writes its id maps). Landlock
// refuses mounts to a domain that handles a file-system right. What the
// thread gives every such child: an empty inheritable set and, where the
// kernel has Landlock, no_new_privs. Then, by the child's class:
//
//   - a read-only child: a base domain with the parts of p that must be one
//     domain for all its threads, the scope of signals and abstract unix
//     sockets (ABI 6) and, without network, the TCP ban (ABI 4). Its
//     Restrict adds the file-system layer on every thread in place.
//     Landlock counts the right to link or rename into another directory
//     (REFER) as handled by every layer, this one too, where no rule can
//     grant it: the child moves no file between two directories, even in
//     its TMPDIR (EXDEV; it writes nothing else).
//   - a writer: no Landlock domain, so that no layer under its own refuses
//     its `git mv a/x b/x` and `ln a/x b/x` (review22 P2-2). Its Restrict
//     applies its whole domain after its mounts (the file rules, the TCP
//     ban and the scope in one ruleset): by re-executing where the domain
//     has a scope, which all its threads must share, in place on every
//     thread where it has none. Until then it runs only brood's own start
//     (its mounts, its envelope read), and no confined process may signal
//     or trace a process outside its own domain, this one included.
//
// As with RestrictForChild, the thread must be locked and must die
// afterwards. The returned entry (empty without Landlock) tells the
// child's Restrict what the base holds.
func BaseForChild(p Policy) (envEntry string, err error) {
	// Root's exec gives the child its inheritable set beside the bounding
	// set: empty it on this starting thread, as restrictThread does,
	// rather than count on the child's new user namespace to.
	if err := clearInheritableThread(); err != nil {
		return "", err
	}
	abi := landlockABI()
	if abi < 1 {
		return "", nil
	}
	runtime.LockOSThread()
	// Root too: the child is under no_new_privs from its first
	// instruction (a warm child idles before its own Restrict), as one
	// started from RestrictForChild's thread is. Mounts in its own user
	// namespace are not affected.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return "", fmt.Errorf("sandbox: set no_new_privs: %w", err)
	}
	var l layer
	if p.ReadOnly {
		l = layer{net: !p.Network && abi >= 4, scope: abi >= 6}
	}
	if l.net || l.scope {
		rfd, err := buildRuleset(p, abi, l)
		if err != nil {
			return "", err
		}
		defer unix.Close(rfd)
		if _, _, errno := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rfd), 0, 0); errno != 0 {
			return "", fmt.Errorf("sandbox: landlock_restrict_self (base): %w", errno)
		}
	}
	return baseEnv + "=" + marker{abi: abi, tcp: l.net, scope: l.scope}.String(), nil
}

// marker is the value of enforcedEnv and baseEnv: "ABI[,seccomp][,caps][,tcp][,scope][,admin][,via=HOW]".
type marker struct {
	abi     int
	seccomp bool   // the syscall filter is installed
	caps    bool   // the bounding set is already cut (root)
	tcp     bool   // the base domain holds the TCP ban
	scope   bool   // the base domain holds the scope
	admin   bool   // the bounding set still holds reexecKeeps: cut them
	via     string // how the domain was applied
}

func (m marker) String() string {
	s := strconv.Itoa(m.abi)
	if m.seccomp {
		s += ",seccomp"
	}
	if m.caps {
		s += ",caps"
	}
	if m.tcp {
		s += ",tcp"
	}
	if m.scope {
		s += ",scope"
	}
	if m.admin {
		s += ",admin"
	}
	if m.via != "" {
		s += ",via=" + m.via
	}
	return s
}

func parseMarker(v string) marker {
	parts := strings.Split(v, ",")
	m := marker{}
	m.abi, _ = strconv.Atoi(parts[0])
	for _, f := range parts[1:] {
		switch {
		case f == "seccomp":
			m.seccomp = true
		case f == "caps":
			m.caps = true
		case f == "tcp":
			m.tcp = true
		case f == "scope":
			m.scope = true
		case f == "admin":
			m.admin = true
		case strings.HasPrefix(f, "via="):
			m.via = strings.TrimPrefix(f, "via=")
		}
	}
	return m
}

// mountsNote is what a read-only child's Status says when its mounts hold
// metadata read-only.
const mountsNote = "mounts: every mount read-only but the task directory (chmod, chown, utimes, xattrs fail with EROFS elsewhere)"

// metadataStatus says for a read-only policy whether the kernel also holds
// metadata (chmod, chown, utimes) read-only.
func metadataStatus(p Policy, seccomp bool) string {
	switch {
	case !p.ReadOnly:
		return ""
	case p.MountsReadOnly:
		return mountsNote
	case seccomp:
		return metadataNote
	}
	return "not held by the kernel on this architecture (no seccomp table)"
}

// layer says which parts of a policy one Landlock domain holds.
type layer struct {
	fs    bool // the file-system rules
	net   bool // the TCP ban
	scope bool // signal and abstract-socket scoping
}

// fullLayer is every part of p the kernel can hold, in one domain.
func fullLayer(p Policy, abi int) layer {
	return layer{fs: p.confinesFS(), net: !p.Network && abi >= 4, scope: abi >= 6}
}

// buildRuleset makes the Landlock ruleset for layer l of p and returns its
// file descriptor, which the caller closes.
func buildRuleset(p Policy, abi int, l layer) (int, error) {
	attr := rulesetAttr{}
	var hidden []string
	if l.fs {
		// (Split here, when the rules are built: not for a layer
		// without file-system rules.)
		// The devices too: a child reads /dev's data devices only.
		hidden = append(slices.Clone(p.HiddenPaths()), devHidden(append(slices.Clone(p.Keep), p.Writable...))...)
		attr.handledFS = writeAccess(abi)
		if len(hidden) > 0 {
			attr.handledFS |= unix.LANDLOCK_ACCESS_FS_READ_FILE
		}
	}
	if l.net {
		attr.handledNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if l.scope {
		// Keep the child from signalling processes outside its own tree
		// (the parent brood, the user's editor) and from reaching abstract
		// unix sockets of host daemons.
		attr.scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return -1, fmt.Errorf("sandbox: landlock_create_ruleset: %w", errno)
	}
	rfd := int(fd)
	if l.fs {
		if err := addPathRule(rfd, "/dev/null", (unix.LANDLOCK_ACCESS_FS_WRITE_FILE|unix.LANDLOCK_ACCESS_FS_TRUNCATE|unix.LANDLOCK_ACCESS_FS_READ_FILE)&attr.handledFS); err != nil {
			unix.Close(rfd)
			return -1, err
		}
		// No child makes device nodes: a root writer's mknod of a disk
		// would be a way around every file rule.
		grant := attr.handledFS &^ (unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK)
		for _, dir := range p.Writable {
			if err := addPathRule(rfd, dir, grant); err != nil {
				unix.Close(rfd)
				return -1, err
			}
		}
		if err := addReadRules(rfd, hidden, unix.LANDLOCK_ACCESS_FS_READ_FILE); err != nil {
			unix.Close(rfd)
			return -1, err
		}
	}
	return rfd, nil
}

// restrictThread builds the ruleset for layer l of p and applies it to the
// calling thread (which it locks and never unlocks: if anything fails after
// the restriction, the thread must not go back to the scheduler). A
// read-only policy also gets the metadata syscall filter; seccomp reports
// whether it was installed. The bounding set keeps keptCaps and extra.
func restrictThread(p Policy, abi int, l layer, extra uint64) (seccomp bool, err error) {
	rfd, err := buildRuleset(p, abi, l)
	if err != nil {
		return false, err
	}
	defer unix.Close(rfd)
	// From here on this goroutine owns the thread, and the thread is never
	// handed back: it carries a domain the rest of the process does not.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return false, fmt.Errorf("sandbox: set no_new_privs: %w", err)
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rfd), 0, 0); errno != 0 {
		return false, fmt.Errorf("sandbox: landlock_restrict_self: %w", errno)
	}
	// The layer last: each landlock_restrict_self copies the rules of
	// the domain it stacks on, so the big layer is copied once.
	if l.fs {
		if err := restrictLayer(p); err != nil {
			return false, err
		}
	}
	// Ambient capabilities (granted so a non-root child could mount its
	// overlay) must not reach the tools.
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	// Nor the inheritable set they were raised from: an exec keeps it, and
	// with a file's inheritable capabilities it is a way back to one.
	if err := clearInheritableThread(); err != nil {
		return false, err
	}
	if !l.fs {
		return false, nil
	}
	// The bounding set only: this thread's start of the child still
	// holds what it holds, and the program started from it gets no more
	// (a root child then makes its own children's namespaces in a user
	// namespace: sandbox.AddNamespaces).
	if err := dropBoundingThread(extra); err != nil {
		return false, err
	}
	return installFilter(p.metadataFiltered())
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

// DropMarkers removes the markers a parent left for Restrict from this
// process's environment, for a child that does not call Restrict (nothing
// to confine, or the kernel sandbox turned off), so its own children never
// inherit a claim about a domain they do not have.
func DropMarkers() {
	dropLayer()
	os.Unsetenv(enforcedEnv)
	os.Unsetenv(baseEnv)
}
