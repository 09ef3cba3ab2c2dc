// Package sandbox confines a child agent process with what the kernel
// offers: Landlock to keep a read-only agent (Bash included) from writing,
// and a private network namespace for a definition that sets
// `network: false`.
//
// The split between parent and child follows how the kernel works. A
// namespace is chosen when the process is created, so the parent sets it on
// the exec.Cmd ([ConfigureNetwork]). Landlock is something a process does to
// itself, so the child calls [Restrict] at start-up, before it runs any tool;
// every program the child starts (bash and what bash starts) inherits the
// restriction and cannot lift it.
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
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
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
	// Network allows network access. When false the parent should also have
	// put the child in its own network namespace (ConfigureNetwork); Restrict
	// adds a Landlock TCP ban where the kernel has one, as a second wall.
	Network bool
}

// confinesFS reports whether the policy asks for a file-system restriction.
func (p Policy) confinesFS() bool { return p.ReadOnly || len(p.Writable) > 0 }

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
	// Note explains an unavailable sandbox in words for the result record.
	Note string `json:"note,omitempty"`
}

// String renders the status as one short line for logs and result records.
func (s Status) String() string {
	var b strings.Builder
	b.WriteString(s.Mechanism)
	if s.ABI > 0 {
		fmt.Fprintf(&b, " (abi %d)", s.ABI)
	}
	if s.NetworkTCP {
		b.WriteString(", tcp denied")
	}
	if s.Note != "" {
		b.WriteString(": " + s.Note)
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

// Probe inspects the running kernel. It starts short-lived processes (the
// `true` program) in new namespaces, because only trying tells whether
// seccomp, sysctls or a container runtime forbid them; it costs a few
// milliseconds, so call it once per process.
func Probe(ctx context.Context) Report {
	r := Report{LandlockABI: landlockABI(), Errors: map[string]string{}}
	if r.LandlockABI == 0 {
		r.Errors["landlock"] = "landlock_create_ruleset: not supported by this kernel or disabled"
	}
	if err := tryNamespaces(ctx, syscall.CLONE_NEWUSER); err != nil {
		r.Errors["user_namespaces"] = err.Error()
	} else {
		r.UserNS = true
	}
	if err := tryNamespaces(ctx, syscall.CLONE_NEWNET); err != nil {
		r.Errors["network_namespace"] = err.Error()
	} else {
		r.NetNS = true
	}
	return r
}

// tryNamespaces starts `true` with the given clone flags (plus a user
// namespace when this process is not root) and reports whether it ran.
func tryNamespaces(ctx context.Context, flags uintptr) error {
	path, err := exec.LookPath("true")
	if err != nil {
		return fmt.Errorf("cannot probe namespaces: %w", err)
	}
	cmd := exec.CommandContext(ctx, path)
	AddNamespaces(cmd, flags, nil)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("start in new namespace: %w", err)
	}
	return nil
}

// ConfigureNetwork is called by the parent before it starts a child whose
// policy forbids the network: the child is created in its own, empty
// network namespace (loopback only, and down). It returns an error when the
// machine has no network namespaces; the caller then records that only the
// Landlock TCP ban (if any) holds.
func ConfigureNetwork(cmd *exec.Cmd, rep Report) error {
	if !rep.NetNS {
		return fmt.Errorf("sandbox: network namespaces unavailable on this machine: %s", rep.Errors["network_namespace"])
	}
	AddNamespaces(cmd, syscall.CLONE_NEWNET, nil)
	return nil
}

// AddNamespaces merges clone flags into cmd.SysProcAttr. Creating most
// namespaces needs CAP_SYS_ADMIN, which an unprivileged user only has inside
// a new user namespace, so for a non-root caller (or when the flags already
// include CLONE_NEWUSER) a user namespace is added that maps the caller's
// own uid and gid to themselves: files keep their owner and git's ownership
// checks keep passing. ambient lists capabilities a non-root child must keep
// across exec inside that namespace (isolate needs CAP_SYS_ADMIN to mount).
// It is safe to call more than once on the same command.
func AddNamespaces(cmd *exec.Cmd, flags uintptr, ambient []uintptr) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	uid, gid := os.Getuid(), os.Getgid()
	if uid != 0 || flags&syscall.CLONE_NEWUSER != 0 {
		flags |= syscall.CLONE_NEWUSER
	}
	a.Cloneflags |= flags
	if a.Cloneflags&syscall.CLONE_NEWUSER != 0 && len(a.UidMappings) == 0 {
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	if uid != 0 {
		for _, c := range ambient {
			if !containsCap(a.AmbientCaps, c) {
				a.AmbientCaps = append(a.AmbientCaps, c)
			}
		}
	}
}

func containsCap(caps []uintptr, c uintptr) bool {
	for _, x := range caps {
		if x == c {
			return true
		}
	}
	return false
}
