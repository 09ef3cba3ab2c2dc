package doctor

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/broodhq/brood/internal/limits"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/sandbox"
)

// Confinement is one class of child and what this machine gives it on each
// axis: what `brood doctor` prints as its table. A value starting with
// "NOT HELD" is a fallback weaker than the class asks for.
type Confinement struct {
	Class        string `json:"class"`
	Filesystem   string `json:"filesystem"`
	Syscalls     string `json:"syscalls"`
	Capabilities string `json:"capabilities"`
	Cgroup       string `json:"cgroup"`
	Limits       string `json:"resource_limits"`
	Network      string `json:"network"`
}

// confinements builds the table from the probes in r.
func confinements(r Report) []Confinement {
	ll := r.LandlockABI >= 1
	sys := "NOT HELD: no syscall table for this architecture"
	if sandbox.FilterAvailable() && ll {
		sys = "seccomp: mount, modules, kexec, bpf, perf denied"
	}
	roSys := sys
	if sandbox.FilterAvailable() && ll {
		roSys += "; chmod, chown, utimes, xattrs too"
	}
	caps := "none (not root; no_new_privs)"
	if os.Geteuid() == 0 {
		caps = "cut to file ownership, kill, setuid/setgid (bounding set, or permitted set under no_new_privs); no_new_privs"
	}
	if !ll {
		caps = "NOT HELD: root's, less ptrace (no Landlock: no_new_privs not set)"
		if os.Geteuid() != 0 {
			caps = "none (not root)"
		}
	}
	cg := "NOT HELD: its session only (a process that leaves it may survive)"
	switch r.Containment {
	case pool.ContainCgroup:
		cg = "a cgroup each it cannot leave (cgroupfs is outside its Landlock rules)"
		if !ll {
			cg = "a cgroup each (NOT HELD against leaving it: no Landlock)"
		}
	case pool.ContainPIDNS:
		cg = "a PID namespace each (no writable cgroup here)"
	}
	limits, net, roNet := limitsCells(r.Limits)
	ro := Confinement{Class: "read-only", Syscalls: roSys, Capabilities: caps, Cgroup: cg, Limits: limits, Network: roNet,
		Filesystem: "Landlock: writes its task directory only"}
	in := Confinement{Class: "in-place writer", Syscalls: sys, Capabilities: caps, Cgroup: cg, Limits: limits, Network: net,
		Filesystem: "Landlock: the work tree, its TMPDIR, build caches; .git config/hooks/info, .brood, .claude read-only, every other mount read-only (chmod, chown, utimes, xattrs fail outside what it writes) (own mount namespace)"}
	iso := Confinement{Class: "isolated writer", Syscalls: sys, Capabilities: caps, Cgroup: cg, Limits: limits, Network: net}
	fleet := Confinement{Class: "fleet worker's child", Syscalls: sys, Capabilities: caps, Cgroup: cg, Limits: limits, Network: net,
		Filesystem: "an overlay of the submitter's snapshot (the worker's checkout never changes); Landlock as its class; every other mount read-only (chmod, chown, utimes, xattrs fail outside what it writes) (own mount namespace)"}
	switch {
	case r.OverlayInUserNS:
		iso.Filesystem = "an overlay copy (ignored files whited out, its upper directory out of its reach); Landlock: the copy, its TMPDIR, build caches; every other mount read-only (own mount namespace)"
	case r.WorktreeFallback:
		iso.Filesystem = "a git worktree copy; Landlock: the copy, its TMPDIR, build caches; the real tree's ignored files unreadable; every other mount read-only (own mount namespace)"
	default:
		iso.Filesystem = "NOT HELD: no overlay and no git: runs in place, as an in-place writer"
	}
	if !r.OverlayInUserNS {
		fleet.Filesystem = "NOT HELD: no overlay in a user namespace: a worker cannot run children here"
	}
	if ll && !r.UserNamespaces {
		in.Filesystem = "Landlock: the work tree, its TMPDIR, build caches; NOT HELD: configuration writable (no user namespace), put back by the parent after; NOT HELD: chmod, chown, utimes, xattrs on any file of its uid (no mount namespace to hold them)"
		if r.WorktreeFallback && !r.OverlayInUserNS {
			iso.Filesystem = "a git worktree copy; Landlock: the copy, its TMPDIR, build caches; the real tree's ignored files unreadable; NOT HELD: chmod, chown, utimes, xattrs on any file of its uid (no user namespace)"
		}
	}
	if !ll {
		ro.Filesystem = "NOT HELD: no Landlock: the tool layer only, and Bash withdrawn"
		in.Filesystem = "NOT HELD: no Landlock: unconfined; the parent puts configuration back after"
		iso.Filesystem = "NOT HELD: no Landlock: its copy by convention only"
		fleet.Filesystem = "NOT HELD: no Landlock"
	}
	return []Confinement{ro, in, iso, fleet}
}

// limitsCells are the table's resource-limits cell (every class has the
// same defaults) and its network cells, for writers and for read-only
// children, from what the limits probe found.
func limitsCells(l *LimitsReport) (lim, net, roNet string) {
	if l == nil {
		return "NOT HELD: not probed", "on", "on"
	}
	var parts, unheld []string
	for _, k := range limits.Fields {
		parts = append(parts, k+" "+l.Defaults[k])
		if strings.HasPrefix(l.HeldBy[k], "nothing") {
			unheld = append(unheld, k)
		}
	}
	lim = strings.Join(parts, ", ") + " by default (what holds each: the child limit lines above)"
	if len(unheld) > 0 {
		lim += "; NOT HELD here: " + strings.Join(unheld, ", ")
	}
	ban := l.ToolNetworkBan
	if !l.ToolNetworkOK {
		ban = "NOT HELD: nothing can ban it here (such an agent's commands are refused)"
	}
	net = "on unless its definition says network: none (then its tools': " + ban + "); the child's own model connection is never cut"
	roNet = "tools: none for the read-only built-ins (explore, plan) unless a definition says network: on (" + ban + "); the child's own model connection is never cut"
	return lim, net, roNet
}

// renderTable prints the confinement table, one block per class.
func renderTable(w io.Writer, rows []Confinement) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nconfinement by class of child:")
	for _, c := range rows {
		fmt.Fprintf(tw, "%s\n", c.Class)
		for _, f := range [][2]string{{"filesystem", c.Filesystem}, {"syscalls", c.Syscalls}, {"capabilities", c.Capabilities},
			{"cgroup", c.Cgroup}, {"resource limits", c.Limits}, {"network", c.Network}} {
			fmt.Fprintf(tw, "  %s\t%s\n", f[0], f[1])
		}
	}
	return tw.Flush()
}
