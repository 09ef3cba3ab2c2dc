package isolate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
)

// A child's confinement, built here for every class (read-only, in-place
// writer, isolated writer, a fleet worker's child) from its envelope: the
// Landlock policy it runs under (ChildPolicy, with the parts every child
// of one dispatcher shares: PolicyBase), applied from the thread it is
// started from (ConfineChild), and the mount views that hold what Landlock
// cannot (HoldReadOnly, InPlaceView). package delegate's Confiners put
// these together for pool.Confiner; they build no policy themselves.

// ChildPolicy is the sandbox a child puts itself in before it runs a tool.
// Every class is confined: a read-only child writes its task directory; an
// isolated writer its copy; an in-place writer the work tree (less the
// configuration its view holds read-only: inPlaceView); writers also the
// caches a build needs (writerCaches).
func ChildPolicy(env *dispatch.Envelope, dir string, base *PolicyBase) (sandbox.Policy, bool) {
	p, needed, _ := childPolicy(env, dir, base, nil)
	return p, needed
}

// childPolicy is ChildPolicy with what became of the child's Read deny
// rules: a read-only child, whose Bash runs unchecked, has the paths they
// match hidden (ReadDenied), expanded once per spawn by x (nil: anew).
func childPolicy(env *dispatch.Envelope, dir string, base *PolicyBase, x *Expansion) (sandbox.Policy, bool, ReadDeny) {
	// The child itself keeps the network: its model is reached over it.
	// network: none holds its tool processes (tool.Env.NoNetwork).
	p := sandbox.Policy{Network: true}
	switch {
	case env.ReadOnly:
		p.ReadOnly = true
		p.Writable = []string{dir} // its tmp/ included
	default:
		p.Writable = writerWritable(env, dir, base)
	}
	// A delegating child makes its own children's task directories in
	// its own (taskdir.Tasks): it writes nothing else beneath
	// .brood/dispatch. (The restriction is inherited: a read-only agent's
	// subagents are read-only too.)
	keep := childKeep(env, dir, p.Writable) // (links resolved: found once)
	p.Hidden = childHidden(env, base, p.Writable, slices.Clone(keep), dir)
	if !env.ReadOnly && env.Isolation == "worktree" && env.IsolationRoot != "" {
		// A worktree copy's writer reads the real tree beside it, which it
		// does not write: what the rules match there is hidden.
		real := *env
		real.IsolationDir = ""
		p.Hidden = append(p.Hidden, outside(x.ReadDenied(&real, []string{dir}).Paths, p.Writable)...)
	}
	rd := x.ReadDenied(env, []string{dir})
	if env.ReadOnly {
		p.Hidden = append(p.Hidden, rd.Paths...)
	} else {
		// A writer's tree is writable, so readable whatever is hidden
		// beneath it: what is there its mount namespace covers
		// (WriterDenied); the rest its domain hides.
		rd.Writer = true
		out := outside(rd.Paths, p.Writable)
		p.Hidden = append(p.Hidden, out...)
		for _, q := range rd.Paths {
			if !slices.Contains(out, q) {
				rd.InTree = append(rd.InTree, q)
			}
		}
	}
	if temps := hostTemps(base.getenv, keep); len(temps) > 0 {
		p.HiddenAround, p.Keep = temps, tempKeep(env, keep, temps, base)
	}
	return p, p.ReadOnly || len(p.Writable) > 0 || !p.Network, rd
}

// writerWritable is what env's writer (working from the task directory
// dir) may write: its copy or tree, dir, its Go caches (where they
// exist) and, for an in-place writer, the run's added directories.
func writerWritable(env *dispatch.Envelope, dir string, base *PolicyBase) []string {
	if env.Isolation == "worktree" && env.IsolationRoot != "" {
		return append([]string{Resolved(env.IsolationRoot), dir}, writerCaches(env, dir)...)
	}
	w := append([]string{Resolved(WorkRoot(env)), dir}, writerCaches(env, dir)...)
	// The run's additional working directories (--add-dir): an in-place
	// writer writes them as its tree, as Claude Code's agents do (an
	// isolated writer's work comes back as one patch of its tree, so it
	// gets none). Never one that holds the home, brood's configuration
	// or a path no child reads (AddDirRefused).
	return append(w, addDirs(env.AddDirs, base.Hidden())...)
}

// WriterWritable is what env's writer working from taskDir may write
// (its Landlock rules' writable roots), for its mount namespace, where
// every other mount is read-only (View.Writes, Workspace.Writes). Its Go
// caches are in its task directory (writerGoDirs), writable with it.
func WriterWritable(env *dispatch.Envelope, taskDir string, base *PolicyBase) []string {
	w := writerWritable(env, ResolvedTaskDir(taskDir), base)
	for i, p := range w {
		w[i] = Resolved(p)
	}
	return w
}

// childKeep are the paths env's child must read whatever is hidden around
// them: writable, dir, its own tree, project and workspace, and the object
// directories its git borrows (a fleet worker's copy).
func childKeep(env *dispatch.Envelope, dir string, writable []string) []string {
	keep := slices.Clone(writable)
	keep = append(keep, dir)
	for _, p := range []string{WorkRoot(env), env.ProjectRoot, env.Workspace, env.IsolationRoot} {
		if p != "" && filepath.IsAbs(p) {
			keep = append(keep, Resolved(p))
		}
	}
	for _, p := range []string{env.Workspace, env.IsolationRoot} {
		if p != "" {
			keep = append(keep, fleetAlternates(Resolved(p))...)
		}
	}
	return keep
}

// childHidden are the paths env's child may not read: the base's
// (credential stores, ~/.config/brood, the fleet worker's cache, the
// user's sandbox.hide), each split around what the child must read
// (childKeep, and, for a child that delegates, the entries of
// ~/.config/brood it reads to start its own children), and the dispatch
// directory whole, whether the child delegates or not: its own task
// directory, writable, is read through its rule, and so are its own
// children's, nested in it (taskdir.Tasks). The cost does not grow with
// the number of tasks.
//
// keep is childKeep(env, dir, writable), which it may append to.
func childHidden(env *dispatch.Envelope, base *PolicyBase, writable, keep []string, dir string) []string {
	// The user's brood state directory (the list of known projects
	// among it); the known projects' records are a layer of their own,
	// built once (KnownLayer).
	hidden := append(base.Hidden(), stateBaseHidden()...)
	var records []string
	if env.ProjectRoot != "" {
		// The root's transcripts and records, whatever the class
		// (rootRecords).
		records = rootRecords(Resolved(dispatch.Root(env.ProjectRoot)))
	}
	if len(env.AllowedDestinations) > 0 && env.Depth < env.MaxDepth {
		if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
			for _, e := range broodConfigReadable() {
				keep = append(keep, realPath(filepath.Join(home, ".config", "brood", e)))
			}
		}
	}
	if env.ProjectRoot != "" {
		// Its siblings' (and its parent's) envelopes, transcripts and
		// results are theirs: the dispatch directory is hidden whole,
		// not split around dir (that would name every other task,
		// thousands in a long-lived project, and list them on every
		// spawn).
		if root := Resolved(dispatch.Root(env.ProjectRoot)); within(root, dir) && dir != root && slices.Contains(writable, dir) {
			return append(append(hideAround(hidden, keep), root), records...)
		}
	}
	return append(hideAround(hidden, keep), records...)
}

// InPlaceWriter reports whether env's child writes the user's own work
// tree (no isolated copy).
func InPlaceWriter(env *dispatch.Envelope) bool {
	return !env.ReadOnly && (env.Isolation != "worktree" || env.IsolationRoot == "")
}

// WorkRoot is the tree an in-place writer may write: the git work tree
// holding its workspace, else the project; never above the project (a
// dotfiles repository in $HOME would make the whole home writable).
func WorkRoot(env *dispatch.Envelope) string {
	for d := env.Workspace; d != ""; {
		if env.ProjectRoot != "" && !beneath(env.ProjectRoot, d) {
			break
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if env.ProjectRoot != "" {
		return env.ProjectRoot
	}
	return env.Workspace
}

// writerCaches are the Go caches a writer may write beside its tree: its
// own (writerGoDirs; review C13), never the user's, where they exist (a
// Landlock rule needs a directory: ConfineChild makes a fleet call's
// first; a task's are in its TMPDIR, under dir's rule).
func writerCaches(env *dispatch.Envelope, dir string) []string {
	var out []string
	build, mod := writerGoDirs(env, dir)
	for _, p := range []string{build, mod} {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, Resolved(p))
		}
	}
	return out
}

// CacheCandidates are the user's Go build and module caches (GOCACHE,
// GOMODCACHE, or their defaults): a child reads them, no child writes
// them (writerCaches).
func CacheCandidates() []string {
	gocache := os.Getenv("GOCACHE")
	if gocache == "" {
		if d, err := os.UserCacheDir(); err == nil {
			gocache = filepath.Join(d, "go-build")
		}
	}
	modcache := os.Getenv("GOMODCACHE")
	if modcache == "" {
		gopath := os.Getenv("GOPATH")
		if gopath == "" {
			if home, err := os.UserHomeDir(); err == nil {
				gopath = filepath.Join(home, "go")
			}
		}
		if first := filepath.SplitList(gopath); len(first) > 0 && first[0] != "" {
			modcache = filepath.Join(first[0], "pkg", "mod")
		}
	}
	return []string{gocache, modcache}
}

// ResolvedTaskDir is a task directory's path with the links above it
// Resolved (the directory itself is checked to be none: taskdir).
func ResolvedTaskDir(p string) string {
	return filepath.Join(Resolved(filepath.Dir(p)), filepath.Base(p))
}

// Resolved is path with its links Resolved: for the parent's own paths
// (a work tree reached through a linked home). Paths in a task directory
// are never Resolved: the sandbox refuses a link there.
func Resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// ConfineChildRD runs on the thread the child is started from: it puts
// that thread under the child's Landlock policy, so the child is confined
// from its first instruction without re-executing itself. Two children are
// the exception: an overlay child and an in-place writer must mount first
// (the copy; the view that holds the tree's configuration read-only), and
// Landlock forbids mounts to a domain with file-system rules; and for a
// child in a new user namespace Go writes the id maps from this thread,
// which such a domain would forbid too. Those get sandbox.BaseForChild: a
// read-only child the base domain (the scope and the TCP ban, which must
// be one domain for all its threads), to which it adds its file-system
// layer itself, in place on every thread; a writer no Landlock domain
// (any layer under its own would refuse moving files between its own
// directories), and it applies its whole domain itself after its mounts
// (by re-executing where the domain has a scope, else in place).
// The ReadDeny it returns is what the kernel holds of env's Read deny
// rules for the child (ReadDeny.ParentNote says it to the parent model).
func ConfineChildRD(cmd *exec.Cmd, env *dispatch.Envelope, td *taskdir.Dir, ws *Workspace, base *PolicyBase) (ReadDeny, error) {
	return (*Expansion)(nil).ConfineChildRD(cmd, env, td, ws, base)
}

// ConfineChildRD is ConfineChildRD with the spawn's expansion of the Read
// deny rules.
func (x *Expansion) ConfineChildRD(cmd *exec.Cmd, env *dispatch.Envelope, td *taskdir.Dir, ws *Workspace, base *PolicyBase) (ReadDeny, error) {
	// Whatever else applies: no child (nor anything below it) holds
	// CAP_SYS_PTRACE, which would pass its siblings' non-dumpable flag.
	if err := sandbox.NoPtraceForChild(); err != nil {
		return ReadDeny{Held: true}, err
	}
	// A delegating child reads its copy of the user's settings, never the
	// file (review C7).
	if err := WriteChildSettings(cmd, env, td); err != nil {
		return ReadDeny{Held: true}, err
	}
	if env.NoLandlock {
		return ReadDeny{Held: true}, nil
	}
	if !env.ReadOnly {
		lookup := os.Getenv
		if cmd.Env != nil {
			lookup = envLookup(cmd.Env)
		}
		cmd.Env = append(cmd.Env, writerGoEnv(env, td.Path(), lookup)...)
	}
	pol, needed, rd := childPolicy(env, td.Path(), base, x)
	// The binary it runs is read where it is, in a host temporary
	// directory too.
	pol.Keep = keepProgram(pol.Keep, pol.HiddenAround, cmd.Path)
	if ws != nil && ws.Mode == ModeWorktree {
		// The real tree is beside a worktree copy: what an overlay hides
		// with whiteouts, the sandbox keeps the child from reading.
		pol.Hidden = append(pol.Hidden, ws.Hidden...)
		if !env.ReadOnly {
			pol.Writable = append(pol.Writable, ws.GitWritable()...)
		}
	}
	// An overlay, this spawn's copy or a fleet worker's (Mount), is
	// mounted by the child: the parent's rules do not reach its files.
	overlay := (ws != nil && ws.Mode == ModeOverlay) || mountsOverlay(cmd)
	layer, err := base.knownLayer(env, td.Path(), &pol, overlay)
	if err != nil {
		return rd, err
	}
	a := cmd.SysProcAttr
	if overlay || (a != nil && (len(a.UidMappings) > 0 || len(a.GidMappings) > 0)) {
		entry, err := sandbox.BaseForChild(pol)
		if entry != "" {
			cmd.Env = append(cmd.Env, entry)
		}
		// The child applies this policy's domain (beyond its base) itself.
		if perr := passPolicy(cmd, td.Path(), pol, needed, true, rd); perr != nil {
			return rd, perr
		}
		if pol.ReadOnly || len(pol.Writable) > 0 {
			sandbox.LayerForChild(cmd, layer)
		}
		return rd, err
	}
	if !needed {
		// Nothing to confine on the file system; still, the child must
		// not signal or ptrace its parent or siblings.
		_, err := sandbox.ScopeForChild()
		if err != nil {
			return rd, err
		}
		return rd, passPolicy(cmd, td.Path(), pol, needed, false, rd)
	}
	// The rule is built on the task directory (a real one, checked here),
	// never on tmp/, which the child makes itself inside it.
	tmp := td.File(taskdir.Tmp)
	if !td.Exists() {
		return rd, fmt.Errorf("the task directory %s is not a directory", td.Path())
	}
	entry, _, applied, err := sandbox.RestrictForChild(pol)
	if err != nil {
		return rd, err
	}
	// A child confined whole from here only reports its policy; one that
	// was not (no Landlock) gets it whole, as it would build it.
	if err := passPolicy(cmd, td.Path(), pol, needed, !applied, rd); err != nil {
		return rd, err
	}
	if applied {
		cmd.Env = append(cmd.Env, entry, "TMPDIR="+tmp)
	}
	return rd, nil
}

// ConfineChild is ConfineChildRD for a caller that says nothing of the
// child's Read deny rules (a warm child's: its task's spawn says it).
func ConfineChild(cmd *exec.Cmd, env *dispatch.Envelope, td *taskdir.Dir, ws *Workspace, base *PolicyBase) error {
	_, err := ConfineChildRD(cmd, env, td, ws, base)
	return err
}

// ConfineChild is ConfineChild with the spawn's expansion of the Read deny
// rules.
func (x *Expansion) ConfineChild(cmd *exec.Cmd, env *dispatch.Envelope, td *taskdir.Dir, ws *Workspace, base *PolicyBase) error {
	_, err := x.ConfineChildRD(cmd, env, td, ws, base)
	return err
}

// beneath reports whether path is root or beneath it.
func beneath(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// HoldReadOnly gives a read-only child of the root its own mount namespace
// with every mount read-only but its own directories (ConfigureReadOnly),
// so that it may set times and modes in its TMPDIR (touch, cp -p, tar x)
// while the mounts keep it from changing any other file's metadata. Where
// the kernel cannot (no Landlock or syscall filter: nothing to relax; no
// user namespaces: note says so), the child keeps the syscall filter that
// denies every metadata call, its TMPDIR's included. The caller leaves out
// a child's own children and a fleet worker's (they start inside a
// Landlock domain, which refuses mounts, or mount a copy).
func HoldReadOnly(cmd *exec.Cmd, env *dispatch.Envelope, taskDir string, base *PolicyBase, userNS bool) (note string, err error) {
	if sandbox.LandlockABI() < 1 || !sandbox.FilterAvailable() {
		return "", nil
	}
	if !userNS {
		return "no user namespaces here: the read-only child's metadata calls (chmod, utimes) are denied in its TMPDIR too", nil
	}
	return "", ConfigureReadOnly(cmd, readOnlyWritable(env, ResolvedTaskDir(taskDir), base))
}

// readOnlyWritable is ChildPolicy(env, dir, base).Writable without the
// rest of the policy (its hidden paths, the host temporary directories'
// split), which the mounts do not use: for a read-only child, dir alone.
func readOnlyWritable(env *dispatch.Envelope, dir string, base *PolicyBase) []string {
	if env.ReadOnly {
		return []string{dir}
	}
	pol, _ := ChildPolicy(env, dir, base)
	return pol.Writable
}

// InPlaceViewFor is the view of an in-place writer of env working from
// taskDir: the work tree's configuration read-only (InPlaceView), its own
// task directory writable (a delegating child's children's directories
// are nested in it), and the files trusted hooks and MCP servers run (held, paths
// relative to the project) read-only too. With allowConfig (the user's
// agents.allow_config_changes) .claude and .mcp.json are the writer's to
// change, but the held files stay read-only: that setting is about the
// project's configuration, not about the programs the root itself runs
// (a writer that could rewrite a PreToolUse hook's script could race its
// pin check).
func InPlaceViewFor(env *dispatch.Envelope, taskDir string, allowConfig bool, held []string) View {
	return (*Expansion)(nil).InPlaceView(env, taskDir, allowConfig, held)
}

// InPlaceView is InPlaceViewFor with the spawn's expansion.
func (x *Expansion) InPlaceView(env *dispatch.Envelope, taskDir string, allowConfig bool, held []string) View {
	// (A delegating child's own children's directories are in its own.)
	own := []string{ResolvedTaskDir(taskDir)}
	root, project := Resolved(WorkRoot(env)), Resolved(env.ProjectRoot)
	tasks := Resolved(dispatch.Root(env.ProjectRoot))
	var files []string
	for _, rel := range held {
		files = append(files, filepath.Join(project, filepath.FromSlash(rel)))
	}
	// The added directories' configuration is held as the tree's (a
	// refused one's too: holding more read-only costs nothing).
	added := addDirs(env.AddDirs, nil)
	var v View
	if allowConfig {
		v = InPlaceView(root, project, own...).AllowingConfig(root, project).HoldingAddDirs(added, true).HoldingFiles(files).CoveringOtherTasks(root, own[0], own[1:]).CoveringRootRecords(root, tasks).CoveringKnownIn(added, tasks)
	} else {
		// A .claude/ made during the run would be, to the user's other
		// sessions, the user's own (an untracked settings.local.json).
		MakeToHold(root, project)
		v = InPlaceView(root, project, own...).HoldingAddDirs(added, false).HoldingFiles(files).CoveringOtherTasks(root, own[0], own[1:]).CoveringRootRecords(root, tasks).CoveringKnownIn(added, tasks)
	}
	v.Denied = x.WriterDenied(env, own[0])
	return v
}

// RestrictChild is the child's own side: it puts itself in the sandbox its
// envelope calls for (where its parent has not already: sandbox.Restrict).
// Every child's TMPDIR is its own tmp/ in its task directory, sandboxed or
// not, so "$TMPDIR/x" never lands in / or in a directory it shares.
func RestrictChild(env *dispatch.Envelope, dir string) (sandbox.Status, error) {
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return sandbox.Status{}, err
	}
	os.Setenv("TMPDIR", tmp)
	makeTaskGoCaches(env, dir, os.Getenv)
	// The policy its parent built for it (ConfineChild), else its own.
	pol, needed, rd, passed, err := takePolicyRD(dir)
	if err != nil {
		return sandbox.Status{}, err
	}
	if !passed {
		pol, needed, rd = childPolicy(env, dir, NewPolicyBase(nil), nil)
	}
	if !env.ReadOnly && len(pol.Writable) > 0 {
		// The user's Go caches it mounted its own overlays over (only
		// then: where none mounted, they stay read-only).
		pol.Writable = append(pol.Writable, mountedGoCaches()...)
	}
	// Its mounts hold metadata read-only but in its own directories
	// (HoldReadOnly): the syscall filter leaves chmod and utimes to them.
	pol.MountsReadOnly = env.ReadOnly && ReadOnlyView()
	if !needed || env.NoLandlock {
		sandbox.DropMarkers()
	}
	if !needed {
		return sandbox.Status{Mechanism: "none"}, nil
	}
	if env.NoLandlock {
		return sandbox.Status{Mechanism: "unavailable", Note: "kernel sandbox turned off by isolation.no_landlock; the tool layer enforces read-only"}, nil
	}
	st, err := sandbox.Restrict(pol)
	if err != nil {
		return st, fmt.Errorf("sandbox: %w", err)
	}
	if rd.Writer {
		rd.Covered = coveredAll(rd.InTree)
	}
	st.ReadDeny, st.ReadDenyOpen = rd.Note(), !rd.Held
	return st, nil
}

// WarmConfiner is the pool.Confiner of a warm child (pool.warm: a
// read-only child of the root started ahead of its task, for the task
// directory it waits in), confined as its task's cold start would be: its
// own read-only mount view (HoldReadOnly; UserNS says whether this machine
// gives user namespaces), then the policy of its envelope from the thread
// it is started from (ConfineChild). Its Prepare is the caller's, before
// pool.Prestart.
type WarmConfiner struct {
	Env     *dispatch.Envelope
	TaskDir *taskdir.Dir
	Base    *PolicyBase
	UserNS  bool
}

// Prepare makes the warm child's read-only mount view.
func (c WarmConfiner) Prepare(_ context.Context, cmd *exec.Cmd) error {
	if !c.Env.ReadOnly || c.Env.NoLandlock {
		return nil
	}
	if _, err := HoldReadOnly(cmd, c.Env, c.TaskDir.Path(), c.Base, c.UserNS); err != nil {
		return fmt.Errorf("hold the read-only child's mounts: %w", err)
	}
	return nil
}

// Confine applies the warm child's policy from the thread it starts from.
func (c WarmConfiner) Confine(cmd *exec.Cmd) error {
	return ConfineChild(cmd, c.Env, c.TaskDir, nil, c.Base)
}
