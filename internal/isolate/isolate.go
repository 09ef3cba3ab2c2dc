// Package isolate gives a writing child agent its own copy of the parent's
// working tree and brings the child's changes back as one patch, applied
// whole or not at all and never staged.
//
// Two mechanisms give the same behaviour:
//
//   - overlay (Linux, where an unprivileged user+mount namespace may mount
//     overlayfs): the child, in its own mount namespace, mounts an overlay
//     whose lower layer is the parent's tree and whose upper layer is an
//     empty directory under the child's state directory, at the tree's own
//     path. Creating it costs two directories and a mount, whatever the size
//     of the repository; the change set is the upper directory.
//   - worktree (everywhere else, or with Options.ForceWorktree): a git
//     worktree under <git-common-dir>/brood-worktrees/<id>, checked out from
//     a snapshot commit of the current tree, dirty state included.
//
// Without git, or outside a repository, the child works in place and the
// Workspace says so.
//
// The base of every patch is a snapshot of the tree at spawn time: a tree
// object written from a private index, which is also what leaves ignored
// files out. Apply-back is serialised per repository by a file lock; the
// patch is applied with `git apply` (no --index, no --3way), which checks
// every hunk against the current tree before it writes anything. When the
// parent or another child changed the same lines meanwhile, nothing is
// applied, and the child's copy and patch are kept and reported.
//
// Ignored files: neither copy shows the parent's gitignored files (.env,
// node_modules, build outputs). A worktree is a checkout of the snapshot,
// which leaves them out; an overlay gets a whiteout per untracked ignored
// entry (a wholly ignored directory is one) in its upper layer before the
// child mounts it. A child's own writes to ignored paths are never part of
// the patch.
//
// Frozen view: a worktree is frozen at spawn. An overlay's lower layer is
// the parent's live tree (ext4 has no cheap snapshot: a frozen lower layer
// would cost a copy of the tree per child), so an overlay child may read
// edits the parent or a sibling makes while it runs. Either way Finish
// takes a second snapshot beside the patch and names every path that moved
// beneath the child (Outcome.BaseMoved); the patch is always taken against
// the spawn snapshot, so such edits are never counted as the child's.
//
// The caller's duties, in order: Prepare (parent, before spawn),
// Configure (parent, on the exec.Cmd), EnterFromEnv (child, first thing at
// start-up), Finish (parent, after the child exited), Cleanup (parent,
// when the outcome has been recorded; a kept copy survives Cleanup only if
// Finish reported a conflict).
//
// This package imports only sandbox (for namespace set-up) and trust (which
// paths are configuration); it must never
// import the agent loop, the pool or the CLI.
package isolate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Mode names the mechanism that gave the child its copy.
type Mode string

// The modes a Workspace can have.
const (
	ModeOverlay  Mode = "overlay"
	ModeWorktree Mode = "worktree"
	ModeNone     Mode = "none"
)

// Options describe one isolated child.
type Options struct {
	// Dir is the parent's working directory; the repository is the one that
	// contains it, and the child starts in the same relative place.
	Dir string
	// ID names the child (its task id); it names the worktree directory.
	ID string
	// StateDir is the child's dispatch directory. The overlay's upper and
	// work directories, the snapshot index and the patch live under
	// StateDir/isolate. Empty means a new temporary directory.
	StateDir string
	// KeepDir is where a landing that could not put back all it wrote
	// keeps the earlier versions for the user, in a new 0700 directory:
	// a directory no child can write (the parent's records), as StateDir
	// is one a delegating sibling can. Empty means StateDir/isolate.
	KeepDir string
	// ForceWorktree skips the overlay even where it is available.
	ForceWorktree bool
	// Keep lists more directories inside the tree that an overlay child
	// must write through to the real tree rather than its copy (e.g. the
	// dispatch records of its own subagents).
	Keep []string
	// BroodDir is the project's .brood directory. Where .gitignore covers
	// it, an overlay child still sees it (its brood reads the agents,
	// settings and model scripts there), except the parent's records and
	// sessions.
	BroodDir string
	// AllowConfig lets the patch change brood's and Claude Code's
	// configuration (.brood/ less its records, .claude/, .mcp.json).
	// Otherwise those changes are left out of it, saved as config.patch in
	// StateDir and reported (Outcome.ConfigRefused).
	AllowConfig bool
	// Programs are more project-relative files held back like
	// configuration: those that trusted hooks and MCP servers run
	// (trust.Grant.Held).
	Programs []string
}

// Support is what the machine offers for isolation, found once by Probe.
type Support struct {
	// Overlay is true when a child in a new user+mount namespace can mount
	// overlayfs.
	Overlay bool `json:"overlay_in_userns"`
	// UserXattr is true when that mount needs (and accepts) the userxattr
	// option, i.e. the kernel stores overlay metadata in user.* xattrs.
	UserXattr bool `json:"userxattr"`
	// Git is the `git --version` output, empty when git is missing.
	Git string `json:"git,omitempty"`
	// Worktree is true when the git worktree fallback can be used.
	Worktree bool `json:"worktree_fallback"`
	// Why says why Overlay is false.
	Why string `json:"why,omitempty"`
}

// Isolator prepares workspaces. Create one per process with New: it probes
// the machine once and is safe for concurrent use.
type Isolator struct {
	ready   chan struct{} // closed when support is known
	mu      sync.Mutex    // guards support after ready (OverlayFailed)
	support Support
	cache   *probeCache // nil: not kept between processes
	cached  bool        // support came from the cache
	// watchDir holds the tree watches' caches (watchCache; "": no watch).
	watchDir string
}

// New returns an Isolator and starts probing the machine in the
// background: the probe re-executes brood in a user+mount namespace (a
// process start), which overlaps the caller's own work and Prepare's walk
// of the tree; only Support and the choice of mechanism wait for it.
func New(ctx context.Context) *Isolator {
	i := &Isolator{ready: make(chan struct{})}
	go func() {
		defer close(i.ready)
		i.support = Probe(ctx)
	}()
	return i
}

// NewWithSupport returns an Isolator that trusts s instead of probing, for
// a caller that probed already (or a test that forces a path).
func NewWithSupport(s Support) *Isolator {
	i := &Isolator{ready: make(chan struct{}), support: s}
	close(i.ready)
	return i
}

// Support returns what the probe found, waiting for it (less an overlay
// a child then failed to mount: OverlayFailed).
func (i *Isolator) Support() Support {
	<-i.ready
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.support
}

// Workspace is one prepared copy. Its methods are not safe for concurrent
// use; each child has its own.
type Workspace struct {
	// Mode is the mechanism in use.
	Mode Mode
	// Dir is where the child works: for overlay the parent's own Dir (the
	// child sees its copy at the same path), for worktree the matching
	// directory inside the worktree, for none the parent's Dir.
	Dir string
	// Root is the top of the child's copy: the directory a confined child
	// may write beneath (sandbox.Policy.Writable).
	Root string
	// Note explains a degraded mode in words for the result.
	Note string
	// WriteDenied, when set, says whether a Write or Edit deny rule
	// forbids the path (absolute, in the real tree): the landing refuses
	// and keeps a patch that writes one (the child's Bash could write it
	// in its copy by a path no rule check sees). The caller sets it.
	WriteDenied func(path string) bool
	// Denied are the paths a writer's Read deny rules match in its copy
	// (WriterDenied), covered in its mount namespace (an overlay's once
	// mounted; a worktree copy's where it has one: HoldGit); the caller
	// sets them before Configure.
	Denied []string
	// Writes are the directories the writer may write (WriterWritable),
	// set by the caller before Configure: in its own mount namespace
	// every other mount is read-only (writeOnly), its copy's too for a
	// worktree copy's writer whose git directory is held (HoldGit).
	Writes []string
	// Hidden are the real tree's gitignored entries a worktree child may
	// not read (sandbox.Policy.Hidden): the overlay hides them with
	// whiteouts, a worktree copy leaves the real tree beside it.
	Hidden []string

	repo     *repo
	id       string
	state    string // StateDir/isolate
	keepDir  string // Options.KeepDir
	keep     []string
	broodDir string // Options.BroodDir, links resolved
	gitDir   string // a worktree's git dir, recorded at creation
	// gitHeld: the worktree writer writes gitDir, its configuration held
	// (HoldGit); landIndex: the parent's copy of the copy's index, out of
	// the child's reach (saveLandIndex).
	gitHeld   bool
	landIndex string
	copyStart string // the commit the worktree copy was checked out at
	ownTemp   string // StateDir when Prepare created it
	upper     string
	work      string
	snap      *snapshot
	// spawnDirty are the paths the spawn snapshot took from the work tree
	// rather than the index: base-moved detection reads them again.
	spawnDirty []string
	// watch saw the parent's tree from before the spawn walk (nil: none).
	watch *treeWatch
	xattr bool // mount with userxattr
	kept  bool

	allowConfig bool
	programs    []string // held back like configuration (Options.Programs)
	config      ConfigReport
}

// Outcome is what came back from a finished child.
type Outcome struct {
	// Applied is true when the child's changes are now in the parent's tree.
	Applied bool `json:"applied"`
	// Files lists the repository-relative paths the patch touches.
	Files []string `json:"files,omitempty"`
	// Patch is the path of the patch file (kept in the state directory),
	// empty when there were no changes.
	Patch string `json:"patch,omitempty"`
	// Merged is true when git apply refused the patch (the parent's file
	// had moved on) and a clean three-way merge of every file applied it.
	Merged bool `json:"merged,omitempty"`
	// Conflict is git apply's explanation when the patch did not apply.
	Conflict string `json:"conflict,omitempty"`
	// KeptAt is the child's preserved copy (worktree, or overlay upper
	// directory) after a conflict.
	KeptAt string `json:"kept_at,omitempty"`
	// BaseMoved lists the repository paths the parent's tree changed
	// between the spawn snapshot and apply-back (the parent's own edits,
	// another task's applied patch). The patch is taken against the spawn
	// snapshot all the same; Applied says whether it still applied whole.
	BaseMoved []string `json:"base_moved,omitempty"`
	// Frozen is true when the child's view could not follow those changes
	// (a worktree is a checkout of the snapshot); an overlay child reads
	// the parent's tree through its lower layer and may have seen them.
	Frozen bool `json:"frozen,omitempty"`
	// Note carries Workspace.Note (e.g. "ran in place").
	Note string `json:"note,omitempty"`
	// ConfigRefused are configuration paths the child changed that were
	// left out of the patch (Options.AllowConfig unset); ConfigPatch holds
	// those changes. ConfigApplied are the ones applied because allowed.
	// Links are the symbolic links the patch makes whose targets leave
	// the tree (Link): the patch was refused whole for them (Conflict says
	// so) and kept.
	Links []Link `json:"links,omitempty"`
	// Refused are the paths of the patch the Edit or Write deny rules
	// forbid (Workspace.WriteDenied): the whole patch was refused for
	// them (Conflict says so) and kept.
	Refused []string `json:"refused,omitempty"`
	// Partial are the paths a landing that failed partway could not put
	// back as they were (path: why), left as it wrote them; Preimages
	// holds their earlier versions. Empty whenever the tree is as before.
	Partial       []string `json:"partial,omitempty"`
	Preimages     string   `json:"preimages,omitempty"`
	ConfigRefused []string `json:"config_refused,omitempty"`
	ConfigPatch   string   `json:"config_patch,omitempty"`
	ConfigApplied []string `json:"config_applied,omitempty"`
}

// Prepare makes the child's copy. For overlay it only creates directories
// and starts the snapshot in the background (it overlaps the child's
// start-up and is waited for in Finish); for worktree it snapshots and
// checks out synchronously. ctx must live until Finish: it bounds the
// background snapshot.
func (i *Isolator) Prepare(ctx context.Context, opts Options) (*Workspace, error) {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	if opts.ID == "" || strings.ContainsAny(opts.ID, "/\\") || opts.ID == "." || opts.ID == ".." {
		return nil, fmt.Errorf("isolate: invalid id %q", opts.ID)
	}
	r, err := openRepo(ctx, dir)
	if err != nil {
		if i.Support().Git == "" {
			return &Workspace{Mode: ModeNone, Dir: dir, Root: dir, Note: "git not found: running in the working directory without isolation"}, nil
		}
		if errors.Is(err, errNotRepo) {
			return &Workspace{Mode: ModeNone, Dir: dir, Root: dir, Note: "not a git repository: running in the working directory without isolation"}, nil
		}
		return nil, err
	}
	w := &Workspace{repo: r, id: opts.ID, keepDir: opts.KeepDir, keep: opts.Keep, allowConfig: opts.AllowConfig, programs: opts.Programs}
	stateDir := opts.StateDir
	if stateDir == "" {
		if stateDir, err = os.MkdirTemp("", "brood-isolate-"+opts.ID+"-"); err != nil {
			return nil, fmt.Errorf("isolate: %w", err)
		}
		w.ownTemp = stateDir
	}
	w.state = filepath.Join(stateDir, "isolate")
	if err := os.MkdirAll(w.state, 0o700); err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	rel, err := filepath.Rel(r.top, dir)
	if err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	// The snapshot's walk of the tree runs while the probe may still run;
	// the tree's watch is set before it, so nothing after it goes unseen.
	w.watch = startTreeWatch(ctx, r, newWatchCache(i.watchDir, r.top, r.gitDir))
	snap, st, err := i.startSnapshot(ctx, r, filepath.Join(w.state, "snapshot.index"))
	if err != nil {
		w.Cleanup(context.WithoutCancel(ctx))
		return nil, err
	}
	w.snap, w.spawnDirty = snap, st.changed
	w.watch.settle(r.top, st.ignored)
	sup := i.Support()
	w.xattr = sup.UserXattr
	if sup.Overlay && !opts.ForceWorktree {
		w.Mode, w.Dir, w.Root = ModeOverlay, dir, r.top
		w.upper, w.work = filepath.Join(w.state, "upper"), filepath.Join(w.state, "work")
		for _, d := range []string{w.upper, w.work} {
			if err := os.Mkdir(d, 0o700); err != nil {
				w.Cleanup(context.WithoutCancel(ctx))
				return nil, fmt.Errorf("isolate: %w", err)
			}
		}
		if opts.BroodDir != "" {
			w.broodDir = resolvePath(opts.BroodDir)
		}
		if _, err := w.hideIgnored(append([]string{stateDir}, opts.Keep...), st.ignored); err != nil {
			w.Cleanup(context.WithoutCancel(ctx))
			return nil, err
		}
		return w, nil
	}
	if !sup.Worktree {
		w.Cleanup(context.WithoutCancel(ctx))
		return &Workspace{Mode: ModeNone, Dir: dir, Root: dir, Note: "neither overlay nor git worktree available: running in the working directory without isolation"}, nil
	}
	if err := w.addWorktree(ctx, rel); err != nil {
		w.Cleanup(context.WithoutCancel(ctx))
		return nil, err
	}
	if opts.BroodDir != "" {
		w.broodDir = resolvePath(opts.BroodDir)
	}
	// The real tree stays beside the copy: its ignored entries are hidden
	// from the child by its sandbox instead of by whiteouts.
	w.Hidden = w.listHidden(append([]string{stateDir}, opts.Keep...), st.ignored)
	return w, nil
}

// Configure prepares the child's exec.Cmd: for overlay it asks for new user
// and mount namespaces (with CAP_SYS_ADMIN kept for a non-root user, so the
// child can mount) and passes the mount parameters in the environment; for
// worktree it sets the working directory. It must be called after any other
// code that replaces cmd.SysProcAttr or cmd.Env wholesale; it merges with
// what is there (sandbox.ConfigureNetwork may be called before or after).
func (w *Workspace) Configure(cmd *exec.Cmd) error {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	switch w.Mode {
	case ModeOverlay:
		if err := addMountNamespace(cmd); err != nil {
			return err
		}
		cmd.Dir = w.Dir
		own := resolvePath(filepath.Dir(w.state)) // as w.Root is
		spec := mountSpec{Mode: ModeOverlay, Root: w.Root, Upper: w.upper, Work: w.work, Cwd: w.Dir, Keep: append([]string{own}, w.keep...), UserXattr: w.xattr}
		if w.broodDir != "" {
			// The other tasks' directories, read through the copy.
			if spec.Tasks = otherTasks(w.Root, own, w.keep); spec.Tasks != "" {
				spec.Own = own
			}
			// The root's transcripts and records, where the overlay
			// shows them (the ignored-file whiteouts hide them when
			// git ignores .brood).
			spec.Covered = View{}.CoveringRootRecords(w.Root, filepath.Join(w.broodDir, "dispatch")).Covered
		}
		spec.Denied = w.Denied
		spec.Writes = w.Writes
		// Its upper and work directories are the parent's (P1-5).
		spec.Private = []string{resolvePath(w.state)}
		return spec.pass(cmd)
	case ModeWorktree:
		cmd.Dir = w.Dir
		spec := mountSpec{Mode: ModeWorktree, Root: w.Root, Cwd: w.Dir}
		if err := w.configureHeldGit(cmd, &spec); err != nil {
			return err
		}
		if w.gitHeld {
			// (In the mount namespace made to hold its git: none, none.)
			spec.Denied = w.Denied
			if len(w.Writes) > 0 {
				spec.Writes = append(slices.Clone(w.Writes), w.GitWritable()...)
			}
		}
		return spec.pass(cmd)
	default:
		cmd.Dir = w.Dir
	}
	return nil
}

// Keep marks the copy to be kept by Cleanup (e.g. when bringing the
// changes back failed), so the child's work is never destroyed.
func (w *Workspace) Keep() { w.kept = true }

// Cleanup removes what Prepare made, except a copy Finish kept after a
// conflict. It is safe to call more than once.
func (w *Workspace) Cleanup(ctx context.Context) error {
	if w.repo == nil {
		return nil
	}
	if w.snap != nil {
		w.snap.wait() // never remove files under a running git
	}
	w.watch.close()
	var errs []error
	if w.Mode == ModeWorktree && !w.kept && w.Root != "" {
		if _, err := w.repo.worktree(ctx, "remove", "--force", "--force", w.Root); err != nil {
			if _, statErr := os.Stat(w.Root); statErr == nil {
				errs = append(errs, err)
			}
		}
	}
	if w.landIndex != "" {
		errs = append(errs, os.Remove(w.landIndex))
		w.landIndex = ""
	}
	if !w.kept {
		if w.ownTemp != "" {
			errs = append(errs, os.RemoveAll(w.ownTemp))
		} else if w.state != "" {
			errs = append(errs, os.RemoveAll(w.state))
		}
	}
	return errors.Join(errs...)
}

// resolvePath is p with its links resolved where it exists.
func resolvePath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
