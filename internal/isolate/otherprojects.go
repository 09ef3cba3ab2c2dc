package isolate

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/broodhq/brood/internal/taskdir"
)

// No child of one project reads another project's records: its root's
// transcripts (.brood/sessions: whatever that unconfined root read,
// credential files included), owner records, its tasks (their
// subagents' transcripts), workflow runs and spilled outputs. brood
// knows the projects it has run in (taskdir.Known: the user's list,
// outside any project) and every child is kept from reading each of
// their state directories whole (the maxHiddenKnown most recent): one
// path per project, whose Landlock cost is one rule per entry of that
// project's top directory (the directories on the way are listed once
// for all), paid once per dispatcher in a layer of their own
// (knownlayer.go), not at every spawn. The user's brood
// state directory is hidden too: the list itself, the state directories
// of projects brood cannot write (taskdir.Fallback) and the TUI's
// prompt history. A project brood never ran in is not on the list, and
// its records (if another tool made a .brood there) are not hidden.

// stateBaseHidden is the user's brood state directory, which no child
// reads (the list of known projects is there).
func stateBaseHidden() []string {
	if base := taskdir.StateBase(); base != "" {
		return []string{realPath(base)}
	}
	return nil
}

// otherProjects are the paths of other projects' records no child of the
// project at project (its real path) reads: the known projects' state
// directories but its own (and any that holds it). They are hidden by a
// layer of their own (KnownLayer), not by each child's policy.
func otherProjects(project string) []string {
	own := ""
	if project != "" {
		own = Resolved(taskdir.Open(project).StateDir())
	}
	var out []string
	home, _ := os.UserHomeDir()
	if home != "" {
		home = realPath(home)
	}
	size, n := 0, 0
	for _, k := range taskdir.Known() {
		if k == own || (own != "" && within(k, own)) {
			continue
		}
		if _, err := os.Lstat(k); err != nil {
			continue // gone: no count against the bound
		}
		if size += len(k) + 3; size > maxKnownBytes || n >= maxHiddenKnown {
			break
		}
		out = append(out, knownHidden(k, own, home))
		n++
	}
	return out
}

// maxTopSize is the size past which a known project's top directory is
// too big to split around its .brood (some thousands of entries: 20
// bytes an entry on tmpfs, 16 to 32 on ext4).
const maxTopSize = 64 << 10

// knownHidden is what hides the known state directory k: k itself, whose
// Landlock cost is a rule per entry of its top directory at every spawn,
// or, where that directory is bigger than maxTopSize (its project's
// writers and repository fill it as they like: review 19 H1), the whole
// top, one rule in its parent's split; never the home or a directory
// that holds the child's own project state own (the home is split
// anyway for the credential stores in it).
func knownHidden(k, own, home string) string {
	top := filepath.Dir(k)
	fi, err := os.Lstat(top)
	if err != nil || fi.Size() <= maxTopSize || top == home || within(top, home) || (own != "" && within(top, own)) {
		return k
	}
	return top
}

// maxHiddenKnown bounds the known projects a child is kept from,
// most recent first: each costs a Landlock rule per entry of its top
// directory, built once per dispatcher (KnownLayer) but copied by the
// kernel into every child's domain (docs/performance.md), and per spawn
// where a child's own policy holds them (an overlay child). Older ones
// are not hidden until brood runs there again.
const maxHiddenKnown = 128

// maxKnownBytes bounds what the known projects add to a child's hidden
// list (most recent first): the list reaches a child started in a user
// namespace in one environment entry (sandbox.HiddenEnv), which the
// kernel refuses past 128 KiB ("argument list too long": no child
// would start).
const maxKnownBytes = 64 << 10

// nestedProjects are the known projects' state directories beneath the
// tree at root (but its own project's, tasks' parent), and the user's
// brood state directory where the tree holds it (a project at the
// home): a writer of that tree has a rule on it that grants reading and
// writing beneath, so its mount namespace covers them
// (CoveringRootRecords).
func nestedProjects(root, tasks string) []string {
	own := filepath.Dir(tasks)
	var out []string
	if base := taskdir.StateBase(); base != "" && within(root, realPath(base)) && realPath(base) != root {
		// The list itself, in a tree that holds the home.
		out = append(out, realPath(base))
	}
	for _, k := range taskdir.Known() {
		if k != own && k != root && within(root, k) {
			out = append(out, k)
		}
	}
	return out
}

// CoveringKnownIn is v with the known projects' state directories (and
// the user's state base) beneath each of an in-place writer's added
// directories dirs covered, as CoveringRootRecords covers those beneath
// its tree: its rule on an added directory would read and write them
// whatever its Landlock policy hides (review22 P1-1: `--add-dir ~/work`
// read ~/work/other/.brood/sessions).
func (v View) CoveringKnownIn(dirs []string, tasks string) View {
	for _, d := range dirs {
		for _, p := range nestedProjects(d, tasks) {
			if !slices.Contains(v.Covered, p) {
				v.Covered = append(v.Covered, p)
			}
		}
	}
	return v
}
