// Package depth decides how deep in a delegation tree a brood process is and
// what the tree's cap is, without trusting the environment.
//
// The environment's stamps (BROOD_SUBAGENT_DEPTH, BROOD_SUBAGENT_MAX_DEPTH)
// are for humans and tools: a child can strip or rewrite them before it runs
// brood from Bash. What the child cannot undo is what its parent made when it
// started it:
//
//   - its argv[0], which the pool sets to a Marker ("brood-<task>-d<depth>-m<max>")
//     and which no process below the child can change (only the child's own
//     code could, and brood never does);
//   - its cgroup, named by the same Marker, which the kernel keeps every
//     process the child starts in, even one that left the child's session and
//     was re-parented away;
//   - under the PID-namespace fallback, its place as the namespace's init:
//     every orphan below it is re-parented to it, so the child stays in the
//     ancestry of everything it started.
//
// A process is a root only when neither its ancestry nor its cgroup names a
// brood child; a root ignores the stamps in its own environment and takes the
// cap from its settings. Below a child, the depth is the deepest marker found
// and the cap the smallest: a forged marker (a process below the child can
// create processes and cgroups of its own) can only make the tree shallower.
package depth

import (
	"fmt"
	"strconv"
	"strings"
)

// Environment stamps a parent sets on its child, for humans and tools.
const (
	EnvDepth    = "BROOD_SUBAGENT_DEPTH"
	EnvMaxDepth = "BROOD_SUBAGENT_MAX_DEPTH"
)

// Marker is what a parent stamps on a child where the child cannot undo it:
// its argv[0] and its cgroup's name.
type Marker struct {
	Task  string // the task id (a ULID: no '-')
	Depth int    // the child's depth (1 for a child of the root)
	Max   int    // the tree-wide cap the root decided
}

const prefix = "brood-"

// String renders m as brood-<task>-d<depth>-m<max>: a valid argv[0] and a
// valid cgroup name.
func (m Marker) String() string {
	return fmt.Sprintf("%s%s-d%d-m%d", prefix, sanitize(m.Task), m.Depth, m.Max)
}

// sanitize keeps a task id usable as one path component and one '-'-free
// field.
func sanitize(id string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r == '_', r == '.':
			return r
		}
		return '_'
	}, id)
}

// Parse reads a Marker from an argv[0] or a cgroup name (a path's last
// component; a path to it is also accepted).
func Parse(s string) (Marker, bool) {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return Marker{}, false
	}
	f := strings.Split(rest, "-")
	if len(f) != 3 || f[0] == "" || !strings.HasPrefix(f[1], "d") || !strings.HasPrefix(f[2], "m") {
		return Marker{}, false
	}
	d, err1 := strconv.Atoi(f[1][1:])
	m, err2 := strconv.Atoi(f[2][1:])
	if err1 != nil || err2 != nil || d < 1 || m < 0 {
		return Marker{}, false
	}
	return Marker{Task: f[0], Depth: d, Max: m}, true
}

// Source says where a Decision came from, for brood doctor and debugging.
type Source string

// Sources of a Decision.
const (
	SourceRoot     Source = "root"     // no brood child above: the settings' cap
	SourceAncestry Source = "ancestry" // a brood child among the process's ancestors
	SourceCgroup   Source = "cgroup"   // the process is in a brood child's cgroup
)

// Decision is a process's place in the tree.
type Decision struct {
	Depth, Max int
	Below      bool     // started below a brood child: never a root
	Task       string   // the nearest child's task id when Below
	From       []Source // what proved it (empty for a root)
}

// Decide combines what the kernel shows (markers found in the ancestry and
// the cgroup) with the settings' cap and the environment's stamps. A root
// (no marker) ignores the stamps entirely. Below a child, the stamps may
// only make the tree stricter than the markers say.
func Decide(found []Found, settingsMax int, getenv func(string) string) Decision {
	if len(found) == 0 {
		return Decision{Depth: 0, Max: settingsMax}
	}
	d := Decision{Below: true, Max: -1}
	for _, f := range found {
		if f.Marker.Depth >= d.Depth {
			d.Depth, d.Task = f.Marker.Depth, f.Marker.Task
		}
		if d.Max < 0 || f.Marker.Max < d.Max {
			d.Max = f.Marker.Max
		}
		if !hasSource(d.From, f.From) {
			d.From = append(d.From, f.From)
		}
	}
	if n, err := strconv.Atoi(getenv(EnvDepth)); err == nil && n > d.Depth {
		d.Depth = n
	}
	if n, err := strconv.Atoi(getenv(EnvMaxDepth)); err == nil && n >= 0 && n < d.Max {
		d.Max = n
	}
	return d
}

func hasSource(s []Source, x Source) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// Found is one marker and where it was seen.
type Found struct {
	Marker Marker
	From   Source
	PID    int // the marked process (ancestry only)
}
