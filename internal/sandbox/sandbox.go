// Package sandbox confines a child agent process with what the kernel
// offers: Landlock to keep a read-only agent (Bash included) from writing,
// and a private network namespace for a definition that sets
// `network: false`.
//
// The split between parent and child follows how the kernel works. A
// namespace is chosen when the process is created, so the parent sets it on
// the exec.Cmd ([ConfigureNetwork]). Landlock is per thread and inherited:
// the parent puts the thread it starts a child from under the child's
// policy ([RestrictForChild]), or, when the child must still mount, only
// under the part of it a read-only child's threads must share, or under
// none of it for a writer ([BaseForChild]: Landlock refuses mounts to a
// domain with file-system rules); the child calls [Restrict] at start-up,
// before it runs any tool, to apply what the parent did not. Every program the child starts (bash and what
// bash starts) inherits the restriction and cannot lift it.
//
// Where the kernel offers none of this, nothing here fails: [Restrict]
// returns a Status saying the sandbox was unavailable, the tool layer's own
// read-only floor still holds for the file tools, and the caller decides
// (with [Report.HoldsBashReadOnly]) whether a read-only agent may have Bash.
//
// This package must never import the agent loop, the pool or the CLI: it is
// machinery they use.
package sandbox

import (
	"fmt"
	"strings"
)

// Policy says what a child may touch. The zero Policy restricts nothing.
type Policy struct {
	// ReadOnly forbids writing anywhere except Writable and /dev/null.
	ReadOnly bool
	// Writable lists directories the child may write beneath. With ReadOnly
	// false and a non-empty Writable, writes are confined to these (the case
	// of an isolated writer: its copy, its dispatch directory, its temp
	// directory). With ReadOnly false and Writable empty, the file system is
	// not restricted.
	Writable []string
	// Hidden lists paths the child may not read (files or directories):
	// the real tree's gitignored entries, for a child whose copy is a git
	// worktree beside them. Reading is then allowed everywhere else.
	Hidden []string
	// HiddenAround are more paths the child may not read but for the
	// paths of Keep beneath them (its tree, task directory and programs
	// in the host's /tmp): split when the rules are built (HiddenPaths).
	HiddenAround []string
	Keep         []string
	// Network allows network access. When false the parent should also have
	// put the child in its own network namespace (ConfigureNetwork); Restrict
	// adds a Landlock TCP ban where the kernel has one, as a second wall.
	Network bool
	// MountsReadOnly says a read-only child's mount namespace holds every
	// mount read-only but Writable's (isolate.ConfigureReadOnly): a file's
	// times, mode, owner and extended attributes then change only beneath
	// Writable, so the syscall filter leaves those calls to the mounts (a
	// child may `touch`, `cp -p` and `tar x` in its TMPDIR).
	MountsReadOnly bool
	// Layer is a domain layer applied with the policy's own (BuildLayer:
	// the paths every child of a dispatcher is kept from reading, built
	// once), where the file system is confined.
	Layer *Layer `json:"-"`
}

// confinesFS reports whether the policy asks for a file-system restriction.
func (p Policy) confinesFS() bool { return p.ReadOnly || len(p.Writable) > 0 }

// metadataFiltered reports whether the syscall filter must deny the
// metadata calls: for a read-only child whose mounts do not hold them.
func (p Policy) metadataFiltered() bool { return p.ReadOnly && !p.MountsReadOnly }

// Status records what Restrict actually enforced, so the child's result can
// say whether the kernel or only the tool layer kept it read-only.
type Status struct {
	// Mechanism is "landlock" when the kernel enforces the file-system
	// policy, "none" when nothing was asked, "unavailable" when a
	// restriction was asked but the kernel cannot provide it.
	Mechanism string `json:"mechanism"`
	// ABI is the Landlock ABI version that was used (0 if none).
	ABI int `json:"abi,omitempty"`
	// NetworkTCP is true when Landlock also forbids TCP bind/connect.
	NetworkTCP bool `json:"network_tcp,omitempty"`
	// Metadata says, for a read-only child, what holds file metadata
	// (modes, owners, times, xattrs) read-only, which Landlock does not
	// cover: the seccomp filter, or that nothing in the kernel does.
	Metadata string `json:"metadata,omitempty"`
	// Syscalls says what the syscall filter of a confined child (reader or
	// writer) denies beyond Metadata, or that nothing in the kernel does.
	Syscalls string `json:"syscalls,omitempty"`
	// Caps says, for a child of root, what is left of its capabilities.
	Caps string `json:"caps,omitempty"`
	// Via says how the domain reached every thread: "parent" (the child
	// was started from a thread under it), "all threads" (applied in place
	// to each thread) or "re-exec" (one thread, then the program started
	// again from it).
	Via string `json:"via,omitempty"`
	// Note explains an unavailable sandbox in words for the result record.
	Note string `json:"note,omitempty"`
	// ReadDeny says what became of the child's Read deny rules in its
	// domain (the paths they match hidden, or why not), "" without any.
	ReadDeny string `json:"read_deny,omitempty"`
	// ReadDenyOpen says the domain does not hide every path the child's
	// Read deny rules match: its commands must be checked one by one.
	ReadDenyOpen bool `json:"read_deny_open,omitempty"`
}

// String renders the status as one short line for logs and result records.
func (s Status) String() string {
	var b strings.Builder
	b.WriteString(s.Mechanism)
	switch {
	case s.ABI > 0 && s.Via != "":
		fmt.Fprintf(&b, " (abi %d, %s)", s.ABI, s.Via)
	case s.ABI > 0:
		fmt.Fprintf(&b, " (abi %d)", s.ABI)
	}
	if s.NetworkTCP {
		b.WriteString(", tcp denied")
	}
	for _, f := range []string{s.Metadata, s.Syscalls, s.Caps} {
		if f != "" {
			b.WriteString(", " + f)
		}
	}
	if s.Note != "" {
		b.WriteString(": " + s.Note)
	}
	if s.ReadDeny != "" {
		b.WriteString("; " + s.ReadDeny)
	}
	return b.String()
}

// Report says which confinement mechanisms this machine offers. It is what
// `brood doctor` prints and what the dispatcher consults before it hands
// Bash to a read-only agent.
type Report struct {
	// LandlockABI is the kernel's Landlock ABI version, 0 when absent or
	// disabled.
	LandlockABI int `json:"landlock_abi"`
	// UserNS is true when this process can create a user namespace.
	UserNS bool `json:"user_namespaces"`
	// NetNS is true when a child can be put in its own network namespace.
	NetNS bool `json:"network_namespace"`
	// Errors holds why a probe failed, keyed by mechanism.
	Errors map[string]string `json:"errors,omitempty"`
}

// HoldsBashReadOnly reports whether the kernel can keep Bash from writing.
// When false, read-only agents must not be given Bash at all.
func (r Report) HoldsBashReadOnly() bool { return r.LandlockABI >= 1 }

// NSLimitError is err, a start or probe refused for a namespace limit
// (UserNSLimited), with what to do about it: a limit says nothing of
// whether this machine has the namespaces, and the child is not started
// with less than they give.
func NSLimitError(err error) error {
	return fmt.Errorf("%w (the user namespace limit is reached: /proc/sys/user/max_user_namespaces, and max_pid_namespaces for a PID namespace, count your user's namespaces in every process, and something holds them all; the child is not started with less: wait for or stop what holds them, e.g. another brood run's children or containers, or raise the limit with sysctl user.max_user_namespaces)", err)
}
