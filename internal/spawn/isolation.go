package spawn

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/textline"
	"github.com/broodhq/brood/internal/tool"
)

// isolator probes the machine's isolation support once, on first use: most
// runs never isolate a child and should not pay for the probe.
func (d *Dispatcher) isolator(ctx context.Context) *isolate.Isolator {
	d.isoOnce.Do(func() {
		cache := ""
		if d.cfg.Depth == 0 {
			// A child (under its parent's Landlock domain, which forbids
			// mounts to its own children) probes for itself: the root's
			// answer is not its own.
			cache = probeCachePath()
		}
		d.iso = isolate.NewCached(context.WithoutCancel(ctx), cache)
		if d.cfg.Depth == 0 {
			// A parent that died before its landing left its worktree
			// copies' git state naming objects only those copies have:
			// the user's git gc and fsck would stop on it.
			_, _ = isolate.ForgetDeadCopies(context.WithoutCancel(ctx), d.cfg.ProjectRoot)
		}
	})
	return d.iso
}

// probeCachePath is where the overlay probe's answer is kept between brood
// processes (isolate.NewCached: an untrusted hint, wrong at worst slow), or
// "" where the user has no cache directory.
func probeCachePath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "brood", "isolate-probe.json")
}

// userNSFor is whether env's child is configured as one that starts in a
// user namespace (its views), and whether that is a guess its own start
// settles (nsAnswer): a worktree copy's writer, whose copy is made for
// the answer, waits for a settled one. Only a root's children that it
// holds in views of their own ask (not a child's, nor a fleet worker's,
// whose children mount its copy).
func (d *Dispatcher) userNSFor(ctx context.Context, env *dispatch.Envelope) (works, guessed bool) {
	switch {
	case d.cfg.Depth > 0 || d.cfg.Mount != nil:
		return true, false // not asked
	case env.Isolation == "worktree":
		return d.ns.settle(ctx), false
	}
	return d.ns.guess()
}

// holdBashReadOnly withdraws Bash from a read-only child where the kernel
// cannot hold it read-only: read-only must mean cannot write.
func holdBashReadOnly(env *dispatch.Envelope) {
	if !env.ReadOnly || !slices.Contains(env.Tools, "Bash") || (sandbox.LandlockABI() >= 1 && !env.NoLandlock) {
		return
	}
	env.Tools = slices.DeleteFunc(env.Tools, func(t string) bool { return t == "Bash" })
	why := "this kernel has no Landlock"
	if env.NoLandlock {
		why = "the kernel sandbox is turned off (isolation.no_landlock)"
	}
	env.Notes = append(env.Notes, "Bash withdrawn from this read-only agent: "+why+" to hold it read-only")
}

// checkIsolation drops a worktree isolation that cannot happen here (no
// repository, no git, neither overlay nor worktree), before the child is
// queued: such a child writes in place, so it must be scheduled as a writer
// sharing the tree, not as an isolated one.
func (d *Dispatcher) checkIsolation(env *dispatch.Envelope) {
	if env.Isolation != "worktree" || d.onCopy() {
		return
	}
	why := ""
	if !inGitRepo(env.Workspace) {
		why = "not a git repository"
	} else if _, err := exec.LookPath("git"); err != nil {
		why = "git not found" // with git, the worktree fallback is always there
	} else {
		// The probe of the overlay (a process start) begins now, beside the
		// child's queueing and set-up; Prepare waits for it. So does the
		// user namespaces' where this writer's copy may hold its git
		// directory (holdsWorktreeGit): the copy is made for the answer.
		d.isolator(context.Background())
		if d.cfg.Depth == 0 && !env.ReadOnly {
			go d.ns.settle(context.Background())
		}
	}
	if why != "" {
		// In place after all: chooseIsolation's isolated-copy note is not
		// true (review41 P2-4); holdInPlace says what holds instead.
		env.Isolation = ""
		env.Notes = dropIsolatedCopyNotes(env.Notes)
		env.Notes = append(env.Notes, why+": the child ran in the working directory without isolation")
	}
}

// dropIsolatedCopyNotes is notes without chooseIsolation's notes that the
// writer runs on an isolated copy: for a writer in place after all.
func dropIsolatedCopyNotes(notes []string) []string {
	return slices.DeleteFunc(notes, func(n string) bool { return strings.HasPrefix(n, isolatedCopyNote) })
}

// inGitRepo reports whether dir is inside a git work tree (a .git file or
// directory in it or an ancestor): without one, isolation runs in place.
func inGitRepo(dir string) bool {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}

// requireSandbox refuses, under sandbox.require, a child whose class the
// kernel cannot hold here, naming what is missing; nil otherwise (the
// child then runs with a note in its result, as without the setting).
func (d *Dispatcher) requireSandbox(env *dispatch.Envelope, userNS bool) error {
	if !d.cfg.Settings.Sandbox.Require {
		return nil
	}
	var lacks string
	switch {
	case env.NoLandlock:
		lacks = "the kernel sandbox is turned off (isolation.no_landlock)"
	case sandbox.LandlockABI() < 1:
		lacks = "this kernel has no Landlock"
	case isolate.InPlaceWriter(env) && d.cfg.Depth == 0 && !d.onCopy() && !userNS:
		lacks = "this machine has no user namespaces (an in-place writer's view needs one)"
	default:
		return nil
	}
	return fmt.Errorf("sandbox.require is set and %s: the subagent is not started; run it where the kernel can confine it, or set sandbox.require = false", lacks)
}

// holdInPlace gives an in-place writer its view: its own mount namespace
// with the tree's configuration read-only (isolate.InPlaceView), where
// Landlock and user namespaces are there to hold it. Where they are not,
// it says so in the envelope's notes (the configuration guard still puts
// back what changed) and reports true.
func (d *Dispatcher) holdInPlace(cmd *exec.Cmd, env *dispatch.Envelope, td *taskdir.Dir, userNS bool, x *isolate.Expansion) (bool, error) {
	if d.cfg.Depth > 0 {
		// This process is a child, in its own view already (its mount
		// namespace, which its children share) and under a Landlock domain
		// that forbids it to mount: its children keep that view, which
		// holds no more than its own rules.
		return noteUnheldEdits(env, isolate.EditHoldWithoutView(env, isolate.Resolved(isolate.WorkRoot(env)), childNoView).Unheld), nil
	}
	if sandbox.LandlockABI() < 1 {
		env.Notes = append(env.Notes, "this kernel has no Landlock: the in-place writer's writes are not confined to the work tree; only its parent's configuration guard holds")
		noteUnheldEdits(env, isolate.EditRulesUnheld(env, "no kernel sandbox here"))
		return true, nil
	}

	if !userNS {
		env.Notes = append(env.Notes, "no user namespaces here: the work tree's configuration (.git/config, .brood, .claude) is not held read-only by the kernel; its parent's configuration guard puts back what changes")
		noteUnheldEdits(env, isolate.EditRulesUnheld(env, "no view of its own: no user namespaces here"))
		return true, nil
	}
	// What its Edit and Write deny rules name, read-only (looked at
	// again now: a literal may have gone since chooseIsolation).
	h := isolate.EditHoldFor(env, isolate.Resolved(isolate.WorkRoot(env)))
	v := x.InPlaceView(env, td.Path(), d.cfg.Settings.Agents.AllowConfigChanges, d.cfg.Grant.Held()).HoldingEdits(h.Paths)
	// Outside what it may write every mount is read-only: Landlock does
	// not govern chmod, chown, utimes nor xattrs (redteam21 P1-1).
	v.Writes = isolate.WriterWritable(env, td.Path(), d.policyBase())
	return noteUnheldEdits(env, h.Unheld), isolate.ConfigureInPlace(cmd, v)
}

// noteUnheldEdits says in env's result which of its Edit and Write deny
// rules the kernel does not hold for its commands (review40 P2-A, P2-B,
// P2-H), and reports whether it said anything.
func noteUnheldEdits(env *dispatch.Envelope, unheld []string) bool {
	if len(unheld) == 0 {
		return false
	}
	env.Notes = append(env.Notes, "Edit/Write deny rules NOT held by the kernel for this writer, checked per command only (a command that computes its path, under bypassPermissions or a rule for all of Bash or for an interpreter, is not judged): "+
		textline.Line(strings.Join(unheld, "; "), 600))
	return true
}

// childNoView is why a child's own in-place writer holds no Edit deny
// literal by a view of its own.
const childNoView = "no view of its own: its parent is a subagent, which cannot mount"

// editUnheld is why an in-place writer of env could not hold its Edit
// and Write deny rules by the kernel ("" when it could, or has none):
// such a writer runs isolated instead (chooseIsolation), its patch judged
// against them before it lands.
func (d *Dispatcher) editUnheld(env *dispatch.Envelope) string {
	if !isolate.HasEditDeny(env) {
		return ""
	}
	root := isolate.Resolved(isolate.WorkRoot(env))
	if d.cfg.Depth > 0 {
		// A child's own writer keeps its parent's view, which binds none
		// of this writer's rules: a child cannot mount (review41 P1-2).
		return isolate.EditHoldWithoutView(env, root, childNoView).Rules()
	}
	if h := isolate.EditHoldFor(env, root); !h.Held() {
		return h.Rules()
	}
	if works, _ := d.ns.guess(); d.cfg.Depth == 0 && !works {
		return strings.Join(isolate.EditRulesUnheld(env, "no view of its own: no user namespaces here"), "; ")
	}
	return ""
}

// holdsWorktreeGit reports whether a writer in a worktree copy gets its
// copy's git directory, its configuration held read-only in its own mount
// namespace (isolate.Workspace.HoldGit): as for an in-place writer's view,
// where Landlock confines it, user namespaces are there and this process
// may mount (the root). Elsewhere its git add and commit fail, as its
// copy's git directory is outside what it may write.
func (d *Dispatcher) holdsWorktreeGit(env *dispatch.Envelope, userNS bool) bool {
	return d.cfg.Depth == 0 && !env.ReadOnly && !env.NoLandlock && sandbox.LandlockABI() >= 1 && userNS
}

// unheldGitConfig lists, for an in-place writer dispatched by the root,
// the git configuration entries that do not exist yet (.git/commondir,
// .git/config.worktree), which no kernel rule can hold (isolate.AbsentGitConfig).
func (d *Dispatcher) unheldGitConfig(env *dispatch.Envelope) []string {
	if d.cfg.Depth > 0 || d.onCopy() || !isolate.InPlaceWriter(env) {
		return nil
	}
	return isolate.AbsentGitConfig(isolate.Resolved(isolate.WorkRoot(env)))
}

// removeUnheld removes those of the entries unheldGitConfig listed that the
// child made, and says so in its result: git would read them as
// configuration (commondir points the repository's git at another git
// directory, with a config of the child's).
func (d *Dispatcher) removeUnheld(env *dispatch.Envelope, unheld []string) {
	if made := isolate.RemoveMade(unheld); len(made) > 0 {
		env.Notes = append(env.Notes, "Configuration: the child made "+strings.Join(made, ", ")+", which git would read as configuration: removed")
	}
}

// spawnConfiner is the pool.Confiner of one start of a child: its copy or
// view and namespaces once it holds its slot (with the tree snapshot a
// writer sharing the tree is judged by), then its sandbox on the thread it
// is started from. Every class goes through it: read-only, in-place
// writer, isolated writer, and a fleet worker's child (d.cfg.Mount).
type spawnConfiner struct {
	s        *spawn
	snapshot bool // take the before-snapshot of the tree
	// guessed: the child was configured as one that starts in a user
	// namespace before this process knew (nsAnswer.guess); then pristine
	// is its command as it came, and notes how many notes its envelope
	// had, for Retry.
	guessed  bool
	pristine *exec.Cmd
	notes    int
	last     *exec.Cmd // the command Confine saw last (the one started)
}

func (c *spawnConfiner) Prepare(ctx context.Context, cmd *exec.Cmd) error {
	s, env := c.s, c.s.j.env
	userNS, guessed := s.d.userNSFor(ctx, env)
	if guessed {
		c.guessed, c.pristine, c.notes = true, cloneCmd(cmd), len(env.Notes)
	}
	// The tree's walk and the child's copy, view and namespaces are made
	// side by side: the child is not started before both are done, and
	// configuring it changes nothing git reports (an empty .claude to hold).
	var snap chan *dispatch.TreeState
	if c.snapshot {
		snap = make(chan *dispatch.TreeState, 1)
		go func() {
			st, _ := dispatch.SnapshotTree(ctx, env.Workspace)
			snap <- st
		}()
	}
	err := s.d.configure(ctx, cmd, env, s.j.td, &s.ws, userNS, s.j.deny)
	spawntrace.Mark(ctx, "isolate")
	if snap == nil {
		s.cfg.watch(ctx, env.ReadOnly, s.ws)
		return cmp.Or(err, s.cfg.refusal())
	}
	// The configuration guard's snapshot (a walk of the tree for nested
	// repositories' git configuration, among others) is taken beside the
	// tree's walk, once configure made what it holds: both are done before
	// the child starts, and neither reads what the other writes.
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		s.cfg.watch(ctx, env.ReadOnly, s.ws)
	}()
	s.before = <-snap
	if s.before != nil {
		s.pwin = s.d.parentW.open(env.Workspace, s.before)
	}
	var roots []string
	var own chan isolate.Links
	if s.before != nil && isolate.InPlaceWriter(env) && (s.ws == nil || s.ws.Mode == isolate.ModeNone) {
		// An in-place writer's links, every one: git status lists no
		// ignored path and no file of a nested repository, and the walk
		// outside git has a bound. Every root it may write: the work
		// root (above a non-git project's workspace) and each --add-dir
		// (review20 L8). The guard's walk lists those it covers; the
		// others are walked beside it.
		roots = isolate.WriterRoots(env, s.d.policyBase())
		own = make(chan isolate.Links, len(roots))
		for _, root := range roots {
			if !s.cfg.holds(root) {
				go func() { own <- isolate.TreeLinks(root, s.cfg.stateDir()) }()
			}
		}
	}
	<-watched
	if roots != nil {
		// Nested repositories the guard's walk found (an untracked
		// clone, a submodule): the top's status lists none of their
		// files, so each is snapshotted too (redteam19 P1-3).
		dispatch.SnapshotNested(ctx, s.before, s.cfg.nestedRepos())
	}
	s.handDown(env)
	if roots != nil {
		s.links = s.cfg.linkPasses(roots, own)
	}
	spawntrace.Mark(ctx, "snapshot")
	return cmp.Or(err, s.cfg.refusal())
}

// handDown gives an in-place writer the tree as this parent found it
// before the child's start (tree-before.json in its task directory), so
// the child's own account of what it changed needs one walk of the tree
// (after its work), not two. The parent's verdict never rests on it: the
// parent keeps its own copy and walks the tree itself after the child.
func (s *spawn) handDown(env *dispatch.Envelope) {
	path := s.j.td.File(taskdir.TreeBefore)
	if s.before == nil || env.ReadOnly {
		_ = os.Remove(path)
		return
	}
	if err := dispatch.WriteJSONQuick(path, s.before); err != nil {
		_ = os.Remove(path) // the child then walks the tree itself
	}
}

func (c *spawnConfiner) Confine(cmd *exec.Cmd) error {
	c.last = cmd
	env := c.s.j.env
	rd, err := c.s.j.deny.ConfineChildRD(cmd, env, c.s.j.td, c.s.ws, c.s.d.policyBase())
	if note := rd.ParentNote(env); err == nil && note != "" {
		// Said to the parent model in brood's words: the child's own
		// result says it too, but is the child's to write. (Retry
		// drops it with the other notes, before Confine runs again.)
		env.Notes = append(env.Notes, note)
	}
	return err
}

// Retry is asked when the child's start failed (pool.Retrier). A child
// configured on the guess that it starts in a user namespace, whose start
// failed as a refused one, while the probe then finds none here, is
// configured again as the probe's "no" has every child of the root
// configured (the notes, no view, sandbox.require's refusal) and started
// once more. A limit reached fails the start with its sentence (nsLimit),
// settling nothing; any other failure stands.
func (c *spawnConfiner) Retry(ctx context.Context, failed *exec.Cmd, err error) (*exec.Cmd, error) {
	s, env := c.s, c.s.j.env
	if !sandbox.StartsUserNS(failed) {
		return nil, nil
	}
	if sandbox.UserNSLimited(err) {
		return nil, nsLimit(err)
	}
	again := false
	if c.guessed {
		var ferr error
		if again, ferr = s.d.ns.failed(ctx, err); ferr != nil {
			return nil, ferr
		}
	}
	if !again {
		if works, guessed := s.d.ns.guess(); works && !guessed && sandbox.UserNSRefused(err) {
			return nil, fmt.Errorf("%w (children here start in a user namespace, so this may be the program's own refusal, e.g. a file without execute permission or on a noexec mount, or the namespace refused since; it is not started with less)", err)
		}
		return nil, nil
	}
	cmd := c.pristine
	c.guessed, c.pristine = false, nil
	env.Notes = env.Notes[:c.notes]
	if err := s.d.configure(ctx, cmd, env, s.j.td, &s.ws, false, s.j.deny); err != nil {
		return nil, err
	}
	return cmd, nil
}

// startedInNS records, once the child started, that it did in a user
// namespace, if so (nsAnswer.started).
func (c *spawnConfiner) startedInNS() {
	if c.last != nil && sandbox.StartsUserNS(c.last) {
		c.s.d.ns.started()
	}
}

// cloneCmd is a fresh command that starts what cmd starts, as cmd is now
// (a command is never started twice).
func cloneCmd(cmd *exec.Cmd) *exec.Cmd {
	c := &exec.Cmd{Path: cmd.Path, Args: slices.Clone(cmd.Args), Env: slices.Clone(cmd.Env), Dir: cmd.Dir,
		Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr, ExtraFiles: slices.Clone(cmd.ExtraFiles), WaitDelay: cmd.WaitDelay}
	if cmd.SysProcAttr != nil {
		a := *cmd.SysProcAttr
		a.UidMappings, a.GidMappings = slices.Clone(a.UidMappings), slices.Clone(a.GidMappings)
		a.AmbientCaps = slices.Clone(a.AmbientCaps)
		c.SysProcAttr = &a
	}
	return c
}

// configure prepares an isolated child's copy and namespaces on its command,
// once it holds its pool slot (so the copy is taken when the child starts).
// userNS says whether the child starts in a user namespace (userNSFor);
// x is the spawn's expansion of its Read deny rules.
func (d *Dispatcher) configure(ctx context.Context, cmd *exec.Cmd, env *dispatch.Envelope, td *taskdir.Dir, ws **isolate.Workspace, userNS bool, x *isolate.Expansion) error {
	if d.cfg.SharedCopy && !env.ReadOnly {
		return fmt.Errorf("%s is a copy shared with other calls (a fleet worker's checkout for read-only calls): only a read-only agent runs in it, and %s writes", d.cfg.Workspace, env.TargetAgent)
	}
	if err := d.requireSandbox(env, userNS); err != nil {
		return err
	}
	// Here, not earlier: a retry configures a fresh command (the first
	// one's memory file is closed once it started or failed).
	if err := tool.PassSecrets(cmd, d.cfg.Redactor); err != nil {
		return err
	}
	// (network: none is the child's tool processes' affair: the Bash tool
	// starts them without network; the child keeps its model connection.)
	changed := false
	if m := d.cfg.Mount; m != nil {
		// The copy was made for this dispatcher (a fleet worker's): every
		// child mounts it, read-only agents too (their view is the copy).
		changed = true
		if env.Isolation == "worktree" {
			env.IsolationRoot, env.IsolationDir = m.Root, m.Dir
		}
		// Every mount of the worker's but what the child writes is
		// read-only in its namespace (review confine21a P1).
		var writes []string
		if !env.NoLandlock && sandbox.LandlockABI() >= 1 {
			writes = []string{isolate.ResolvedTaskDir(td.Path())}
			if !env.ReadOnly {
				writes = isolate.WriterWritable(env, td.Path(), d.policyBase())
			}
		}
		if err := m.Configure(cmd, writes, x.WriterDenied(env, td.Path())...); err != nil {
			return err
		}
	} else if d.cfg.CopyRoot != "" {
		// A fleet worker's full copy: nothing to mount, a writer writes
		// the copy (ChildPolicy's isolated writer), never the worker's
		// project.
		changed = true
		if env.Isolation == "worktree" {
			env.IsolationRoot, env.IsolationDir = d.cfg.CopyRoot, d.cfg.Workspace
		}
	} else if env.Isolation == "worktree" {
		changed = true
		id := env.TaskID
		if env.ResumeCount > 0 {
			// A resume gets a fresh copy; an earlier one left behind (a
			// conflict, a killed run) is kept beside it, never reused blind.
			id = fmt.Sprintf("%s-%d", env.TaskID, env.ResumeCount)
			if td.Has(taskdir.Isolate) {
				kept := fmt.Sprintf("%s.%d", taskdir.Isolate, env.ResumeCount-1)
				if err := td.Rename(taskdir.Isolate, kept); err != nil {
					return fmt.Errorf("keep the earlier copy: %w", err)
				}
				env.Notes = append(env.Notes, "the earlier run's copy is kept at "+td.File(kept))
			}
		}
		// A landing's kept earlier versions go to this dispatcher's own
		// records (the root's .brood/records, hidden from every child),
		// not the child's task directory, which it writes (review20 L5,
		// review22 P1-2: td.Owners() was the child's own owners/).
		opts := isolate.Options{Dir: env.Workspace, ID: id, StateDir: td.Path(), KeepDir: d.cfg.Owners.Path(), ForceWorktree: env.ForceWorktree,
			BroodDir: filepath.Join(env.ProjectRoot, taskdir.StateDirName), AllowConfig: d.cfg.Settings.Agents.AllowConfigChanges,
			Programs: d.cfg.Grant.Held()}
		w, err := d.isolator(ctx).Prepare(ctx, opts)
		if err != nil {
			return fmt.Errorf("isolate the child: %w", err)
		}
		*ws = w
		if w.Mode == isolate.ModeNone {
			env.Isolation = ""
			env.Notes = dropIsolatedCopyNotes(env.Notes)
			env.Notes = append(env.Notes, w.Note)
		} else {
			env.IsolationRoot, env.IsolationDir = w.Root, w.Dir
			if w.Dir != env.Workspace {
				// A worktree lives elsewhere: the child must be told where.
				env.System = strings.Replace(env.System, "WORKSPACE PATH:\n"+env.Workspace+"\n", "WORKSPACE PATH:\n"+w.Dir+"\n", 1)
			}
		}
		if w.Mode == isolate.ModeWorktree && d.holdsWorktreeGit(env, userNS) {
			if err := w.HoldGit(); err != nil {
				return err
			}
		}
		if w.Mode == isolate.ModeOverlay || w.Mode == isolate.ModeWorktree {
			w.Denied = x.WriterDenied(env, td.Path())
			w.WriteDenied = isolate.WriteDeniedFunc(env)
			if !env.ReadOnly && !env.NoLandlock && sandbox.LandlockABI() >= 1 {
				// Every mount but what it writes read-only in its
				// namespace (redteam21 P1-1).
				w.Writes = isolate.WriterWritable(env, td.Path(), d.policyBase())
			}
		}
		if err := w.Configure(cmd); err != nil {
			return err
		}
	}
	if env.NoLandlock && !env.ReadOnly {
		// Nothing keeps a writer from the rest of the user's files
		// (brood's state directory, a checkout's fleet records in it,
		// included): its result says so (review35 P2-1).
		where := "its copy"
		if isolate.InPlaceWriter(env) {
			where = "the work tree; only its parent's configuration guard holds"
		}
		env.Notes = append(env.Notes, "the kernel sandbox is turned off (isolation.no_landlock): the writer's writes are not confined to "+where)
		noteUnheldEdits(env, isolate.EditRulesUnheld(env, "the kernel sandbox is turned off"))
		changed = true
	}
	if !d.onCopy() && isolate.InPlaceWriter(env) && !env.NoLandlock {
		noted, err := d.holdInPlace(cmd, env, td, userNS, x)
		if err != nil {
			return fmt.Errorf("hold the in-place writer's configuration: %w", err)
		}
		changed = changed || noted
	}
	if env.ReadOnly && !env.NoLandlock {
		noted, err := d.holdReadOnly(cmd, env, td, userNS)
		if err != nil {
			return fmt.Errorf("hold the read-only child's mounts: %w", err)
		}
		changed = changed || noted
	}
	if !changed {
		return nil
	}
	// Not synced, as its first write was not (prepareNew): a resume
	// rebuilds the envelope from the owner record, and this copy is what
	// the child, started next, reads.
	return td.WriteJSON(taskdir.Envelope, env, false)
}
