package isolate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
)

// Other projects' records are hidden from every child by one Landlock
// layer per project a dispatcher starts children for (otherProjects:
// the known projects' state directories), built once and applied to
// each of its children with one landlock_restrict_self, by the thread
// that starts it or, for a child that must mount first, by the child
// itself from an inherited descriptor (sandbox.LayerForChild). Its cost,
// a rule per entry of each known project's top directory, is paid when
// it is built, not at every spawn. A child's own children inherit the
// layer with its domain; a child reads no list of known projects (the
// state directory is hidden), so builds none of its own.
//
// The layer is built again when the list changes, when a directory it
// holds a rule per entry of (each directory on the way to a hidden path:
// the home, a known project's top) has changed since (its modification
// time: an entry made, removed or replaced by a rename there, which the
// layer has no rule for, so would be unreadable to children), or when it
// is older than maxLayerAge.

// maxLayerAge is how long a dispatcher's known-projects layer serves
// before it is built again.
const maxLayerAge = time.Minute

// maxLayers bounds a dispatcher's layers (one per project and set of
// shared paths: in a run, one or two).
const maxLayers = 16

// knownLayers are a dispatcher's known-projects layers, one per project
// and set of shared paths (sharedHidden).
type knownLayers struct {
	mu     sync.Mutex
	byRoot map[string]knownLayer
	locks  map[string]*sync.Mutex // one a layer: its build (keyLock)
	// warming counts the WarmLayers at work for a project: the spawns
	// that start meanwhile do not wait for the layer (warmingFor), nor
	// does a second WarmLayer build a policy to warm the same one.
	warming map[string]int
	// warmed is the key of the layer WarmLayer built last for a project.
	warmed map[string]string
}

type knownLayer struct {
	layer  *sandbox.Layer
	nested []string
	stamp  string
	dirs   []string // the directories on the way to its paths
	seen   string   // their modification times when it was built
	built  time.Time
}

// KnownLayer is the layer hiding from the children of the project at
// project (a real path) the other known projects' records (nil when
// there are none, or no Landlock), and the records of those nested in
// the project's tree, which each child's policy hides (nested): a
// directory on the way to one would have a rule per entry then, in a
// layer with no rule for the child's own tree, and an entry a writer
// made there later would be unreadable to it. The layer hides shared too
// (sharedHidden: what the children hide whole whatever their task).
func (b *PolicyBase) KnownLayer(project string, shared []string) (l *sandbox.Layer, nested []string, err error) {
	return b.knownLayerKeyed(project, shared, false)
}

// knownLayerKeyed is KnownLayer; warm says WarmLayer asks, whose key is
// then the one it warmed for project (startWarming).
func (b *PolicyBase) knownLayerKeyed(project string, shared []string, warm bool) (l *sandbox.Layer, nested []string, err error) {
	stamp := knownStamp()
	key := layerKey(project, shared)
	if warm {
		b.known.mu.Lock()
		if b.known.warmed == nil || len(b.known.warmed) >= maxLayers {
			b.known.warmed = map[string]string{}
		}
		b.known.warmed[project] = key
		b.known.mu.Unlock()
	}
	// One build of a layer at a time; another layer's lookups (a child
	// that does not wait for the warmed one) go on meanwhile.
	one := b.keyLock(key)
	one.Lock()
	defer one.Unlock()
	b.known.mu.Lock()
	k, ok := b.known.byRoot[key]
	b.known.mu.Unlock()
	if ok && k.stamp == stamp && time.Since(k.built) < maxLayerAge && dirsStamp(k.dirs) == k.seen {
		return k.layer, k.nested, nil
	}
	var outside []string
	for _, h := range otherProjects(project) {
		if project != "" && within(project, h) {
			nested = append(nested, h)
		} else {
			outside = append(outside, h)
		}
	}
	paths := append(outside, shared...)
	dirs := waysTo(paths)
	seen := dirsStamp(dirs) // before the build: a change during it rebuilds
	if l, err = sandbox.BuildLayer(paths); err != nil {
		return nil, nil, err
	}
	b.known.mu.Lock()
	defer b.known.mu.Unlock()
	if b.known.byRoot == nil || len(b.known.byRoot) >= maxLayers {
		b.known.byRoot = map[string]knownLayer{}
	}
	// A layer replaced is not closed: a child may be starting with it
	// (its descriptor is released when nothing holds it).
	b.known.byRoot[key] = knownLayer{layer: l, nested: nested, stamp: stamp, dirs: dirs, seen: seen, built: time.Now()}
	return l, nested, nil
}

// keyLock is the lock of the layer found by key (made on first use).
func (b *PolicyBase) keyLock(key string) *sync.Mutex {
	b.known.mu.Lock()
	defer b.known.mu.Unlock()
	if b.known.locks == nil || len(b.known.locks) >= 4*maxLayers {
		b.known.locks = map[string]*sync.Mutex{}
	}
	m := b.known.locks[key]
	if m == nil {
		m = &sync.Mutex{}
		b.known.locks[key] = m
	}
	return m
}

// waysTo are the directories on the way to paths (each one's parent and
// theirs, up to the root), once each: those the layer holds a rule per
// entry of.
func waysTo(paths []string) []string {
	var dirs []string
	for _, p := range paths {
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			if slices.Contains(dirs, d) {
				break
			}
			dirs = append(dirs, d)
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return dirs
}

// dirsStamp is the modification times of dirs: it changes when an entry
// is made, removed or renamed in any of them.
func dirsStamp(dirs []string) string {
	var b strings.Builder
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil {
			fmt.Fprintf(&b, "%d.", fi.ModTime().UnixNano())
		} else {
			b.WriteString("-.")
		}
	}
	return b.String()
}

// knownStamp tells one version of the list of known projects from
// another: its size and modification time ("" without one).
func knownStamp() string {
	fi, err := os.Stat(taskdir.KnownFile())
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d/%d", fi.ModTime().UnixNano(), fi.Size())
}

// knownLayer is the known-projects layer for env's child, whose policy
// is pol: set as pol's Layer and returned; the nested projects' records
// join pol's Hidden, split around what the child must read (childKeep).
// Where a path the child must read lies beneath a path the layer hides
// or holds one (a workspace in another project's records, a kept
// directory on the way), the layer, which cannot be split per child, is
// not used: its paths join pol's Hidden too, as every child's did before
// the layer. So for an overlay child (overlay): Landlock skips the rule
// on a mount point as it walks up from a file, so a rule the parent
// built on the directory the overlay is mounted on (its tree: an entry
// of a directory on the layer's way) does not reach the overlay's files
// (found by attack/TestOtherProjectsRecordsUnreadable: the child could
// not read its own envelope; review27: a rule on a directory above the
// mount point does reach them), while its own layer is built after the
// mount.
//
// The layer holds too the paths of pol every child of the root hides
// whole (sharedHidden: the credential stores, brood's state, a host
// temporary directory holding nothing the child keeps), which leave
// pol then: their rules (a rule per entry of /, the home, /dev for
// /dev/shm: about a hundred on a plain host) are built once per
// dispatcher, not by every child. The same READ_FILE is denied on the
// same paths; a layer is one more domain the child's accesses must pass.
func (b *PolicyBase) knownLayer(env *dispatch.Envelope, dir string, pol *sandbox.Policy, overlay bool) (*sandbox.Layer, error) {
	return b.knownLayerFor(env, dir, pol, overlay, false)
}

// knownLayerFor is knownLayer; warm says it is WarmLayer's, which builds
// the layer with the shared paths whoever else is at work.
func (b *PolicyBase) knownLayerFor(env *dispatch.Envelope, dir string, pol *sandbox.Policy, overlay, warm bool) (*sandbox.Layer, error) {
	if !pol.ReadOnly && len(pol.Writable) == 0 {
		return nil, nil // the file system is not confined
	}
	project := ""
	if env.ProjectRoot != "" {
		project = Resolved(env.ProjectRoot)
	}
	keep := childKeep(env, dir, pol.Writable)
	var shared []string
	if !overlay && env.Depth <= 1 {
		shared = sharedHidden(b, pol, keep, pol.Keep)
		if !warm && b.warmingFor(project, shared) {
			// Not waited for: this child builds those rules itself, as
			// it would without the layer (a run's first child).
			shared = nil
		}
	}
	l, nested, err := b.knownLayerKeyed(project, shared, warm)
	if err != nil {
		return nil, err
	}
	if len(nested) > 0 {
		pol.Hidden = append(pol.Hidden, hideAround(nested, keep)...)
	}
	known := slices.DeleteFunc(slices.Clone(l.Paths()), func(h string) bool { return slices.Contains(shared, h) })
	for _, h := range known {
		if overlay || conflicts(h, keep) {
			// pol keeps the shared paths: no layer holds them.
			pol.Hidden = append(pol.Hidden, hideAround(known, keep)...)
			return nil, nil
		}
	}
	if l != nil {
		pol.Layer = l
		out := func(h string) bool { return slices.Contains(shared, h) }
		pol.Hidden = slices.DeleteFunc(pol.Hidden, out)
		pol.HiddenAround = slices.DeleteFunc(pol.HiddenAround, out)
	}
	return l, nil
}

// conflicts reports whether h holds a path of keep or lies beneath one.
func conflicts(h string, keep []string) bool {
	return slices.ContainsFunc(keep, func(k string) bool { return within(h, k) || within(k, h) })
}

// sharedHidden are the paths of pol's Hidden and HiddenAround that every
// child of b hides whole, found in pol as it holds them (unsplit): the
// base's (its credential stores, brood's state directory) and the host
// temporary directories. Not one that holds a path the child reads
// (tree: its tree, project, task directory, writable directories; or
// extra: its program, what every child reads), which its own rules split
// around it; nor one beneath tree: the child mounts there (its read-only
// view, an in-place writer's covers), and what a writer makes on the way
// would have no rule in the layer, so be unreadable (its own layer reads
// it through its writable rule); nor one in a host temporary directory
// it splits (the bench's home, a HOME in /tmp: the layer would hold a
// rule per entry of that busy directory and be built again whenever one
// is made there). Sorted: the layer is found by them.
func sharedHidden(b *PolicyBase, pol *sandbox.Policy, tree, extra []string) []string {
	cands := b.sharedCands()
	clean := func(ps []string) []string {
		out := make([]string, 0, len(ps))
		for _, p := range ps {
			out = append(out, filepath.Clean(p))
		}
		return out
	}
	tree, extra = clean(tree), clean(extra)
	var out []string
	add := func(h string) {
		if !filepath.IsAbs(h) || filepath.Clean(h) != h || h == "/" || slices.Contains(out, h) {
			return
		}
		reads := func(k string) bool { return holds(h, k) }
		if !slices.ContainsFunc(tree, reads) && !slices.ContainsFunc(extra, reads) &&
			!slices.ContainsFunc(tree, func(k string) bool { return holds(k, h) }) {
			out = append(out, h)
		}
	}
	for _, h := range pol.HiddenAround {
		add(h)
	}
	for _, h := range pol.Hidden {
		if cands[h] && !slices.ContainsFunc(pol.HiddenAround, func(t string) bool { return holds(t, h) }) {
			add(h)
		}
	}
	slices.Sort(out)
	return out
}

// holds reports whether p is dir or beneath it; both clean and absolute
// (within's answer, without filepath.Rel's allocations: sharedHidden asks
// it some thousand times a spawn).
func holds(dir, p string) bool {
	return p == dir || dir == "/" || (len(p) > len(dir) && p[len(dir)] == '/' && strings.HasPrefix(p, dir))
}

// WarmLayer builds, off the spawn's path, the layer ConfineChild will
// take for env's child (its task directory dir): a root's first spawn
// would otherwise build it on the thread its child starts from. It does
// nothing when a layer for env's project is already built and fresh, or
// where ConfineChild builds none (an isolated child, the kernel sandbox
// off). The layer found is ConfineChild's only if its shared paths are
// the same (a program in a host temporary directory keeps it from
// being: that child builds its own).
//
// x is the spawn's expansion of the Read deny rules (nil: anew).
func (b *PolicyBase) WarmLayer(env *dispatch.Envelope, dir string, x *Expansion) {
	if env.NoLandlock || env.Isolation != "" || sandbox.LandlockABI() < 1 {
		return
	}
	project := ""
	if env.ProjectRoot != "" {
		project = Resolved(env.ProjectRoot)
	}
	if !b.startWarming(project) {
		return // another WarmLayer warms it, or warmed it not long ago
	}
	defer b.endWarming(project)
	pol, needed, _ := childPolicy(env, dir, b, x)
	if needed {
		_, _ = b.knownLayerFor(env, dir, &pol, false, true)
	}
}

// startWarming counts a WarmLayer at work for project, unless one is
// already, or the layer the last one built (its exact key: its shared
// paths too) is younger than maxLayerAge (it may be stale for another
// reason: KnownLayer checks).
func (b *PolicyBase) startWarming(project string) bool {
	b.known.mu.Lock()
	defer b.known.mu.Unlock()
	if b.known.warming[project] > 0 {
		return false
	}
	if key, ok := b.known.warmed[project]; ok {
		if k, ok := b.known.byRoot[key]; ok && time.Since(k.built) < maxLayerAge {
			return false
		}
	}
	if b.known.warming == nil {
		b.known.warming = map[string]int{}
	}
	b.known.warming[project]++
	return true
}

// endWarming ends startWarming's count.
func (b *PolicyBase) endWarming(project string) {
	b.known.mu.Lock()
	defer b.known.mu.Unlock()
	if b.known.warming[project]--; b.known.warming[project] <= 0 {
		delete(b.known.warming, project)
	}
}

// warmingFor reports whether a WarmLayer is at work for project while no
// layer for project and shared is built yet.
func (b *PolicyBase) warmingFor(project string, shared []string) bool {
	b.known.mu.Lock()
	defer b.known.mu.Unlock()
	_, built := b.known.byRoot[layerKey(project, shared)]
	return b.known.warming[project] > 0 && !built
}

// layerKey finds the layer of project and shared paths in knownLayers.
func layerKey(project string, shared []string) string {
	return project + "\x00" + strings.Join(shared, "\x00")
}
