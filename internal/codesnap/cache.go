package codesnap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/isolate"
)

// Cache is a worker's per-host cache of repositories: one bare clone per
// repository under Dir/repos, and the per-call copies under Dir/jobs. Keep
// it on a local disk (its lock is flock); several worker processes on one
// host may share it.
type Cache struct {
	Dir string
	// Overlay makes each copy an overlay over a cached checkout of its base
	// commit (overlay.go), which the child mounts: a copy then costs the
	// dirty state, not the tree. Set it where isolate.ProbeIn(Dir) finds an
	// overlay (UserXattr as it says); otherwise every copy is a full
	// checkout. A snapshot with no base commit always gets a full one.
	Overlay, UserXattr bool
	// TreeTTL is how long Prune keeps a base checkout no copy has used
	// (default an hour).
	TreeTTL time.Duration
	// Remotes are the only git remotes this worker fetches a base commit
	// from (its own settings: worker.remotes, brood worker --remote): a
	// snapshot's repository is fetched from the entry that names the same
	// repository, never from the URL the submission carries. Empty (the
	// default): bases come only from bundles in the store.
	Remotes []string

	// verified holds, per base checkout, the index this process verified
	// it against by content (verify.go): memory, not disk, is trusted.
	verified sync.Map
	// homes holds, per verified checkout, the clone and object format it
	// was verified with (a lowerHome): a donor's (derive.go) must match.
	homes sync.Map
	// verifying holds, per base checkout, a one-slot semaphore (chan
	// struct{}): one call of this process verifies it by content while
	// the others wait and then take its index (verify.go).
	verifying sync.Map
	// pinned holds the (clone, base) pairs this process has fetched and
	// pinned: a later call on the same base runs no git to find it.
	pinned sync.Map
	// roots holds, per dirty lower checkout, its tree (lower.go), made
	// by this process from the base and the dirty patch.
	roots sync.Map
}

// DefaultCacheDir is the user's cache directory's brood/fleet.
func DefaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "brood", "fleet")
	}
	return filepath.Join(os.TempDir(), "brood-fleet")
}

// Options describe one materialisation.
type Options struct {
	// ID names the copy (a task id); it prefixes the job directory.
	ID string
	// Partial is an earlier attempt's change to start from (a retry on
	// another worker); nil starts from the snapshot.
	Partial *Result
	// ReadOnly says the child only reads (a read-only agent, which its
	// sandbox keeps from writing): where the copy would be an overlay with
	// nothing of its own (no layers, no partial change), it is the cache's
	// verified checkout of the snapshot itself, with no private layer or
	// mount. Its Result is no change.
	ReadOnly bool
}

// Checkout is one call's copy of the submitter's tree.
type Checkout struct {
	// Dir is where the child starts: Root joined with the submitter's
	// place in the repository.
	Dir string
	// Root is the top of the copy, a git repository of its own: the only
	// directory the child needs to write beneath.
	Root string

	// Mount is set when the copy is an overlay over the cache's checkout
	// of the base (Cache.Overlay): the child must mount it (Root is then
	// that shared checkout, which only the mounted view shows as the
	// snapshot) and nothing may write under Root without it.
	Mount *isolate.Mount

	job       string // the job directory: meta.git, index, tree (or upper, work)
	meta      string // our git dir for the copy (outside Root)
	index     string // the snapshot tree's index, with the checkout's stat data
	base      string // an overlay's base index (the lower checkout's tree)
	lowerTree string // an overlay's lower tree (the base commit's, or with the dirty state)
	upper     string // an overlay's upper layer
	snap      *Snapshot
	shared    bool     // a read-only call's copy: the cache's checkout itself
	lock      *os.File // held until Cleanup (PruneJobs)
	treeLock  *os.File // an overlay's shared lock on its base checkout
}

// Shared reports whether co is the cache's checkout itself (a read-only
// call's, where nothing is mounted): other calls read it, and every
// overlay of its base stacks on it, so no writer may run in it.
func (co *Checkout) Shared() bool { return co.shared }

// Materialise makes a copy of snap for one call. Each call gets a new
// directory; concurrent calls on one cache are safe.
func (c *Cache) Materialise(ctx context.Context, store *blobstore.Store, snap *Snapshot, opts Options) (*Checkout, error) {
	if snap == nil || snap.Tree == "" {
		return nil, errors.New("codesnap: the snapshot names no tree")
	}
	if err := snap.Check(); err != nil {
		return nil, err
	}
	if err := opts.Partial.Check(); err != nil {
		return nil, err
	}
	if strings.ContainsAny(opts.ID, "/\\") || opts.ID == "." || opts.ID == ".." {
		return nil, fmt.Errorf("codesnap: invalid id %q", opts.ID)
	}
	format := snap.ObjectFormat
	if format == "" {
		format = "sha1"
	}
	var objects []string
	var repo string
	if snap.Base != "" {
		var err error
		if repo, err = c.ensureBase(ctx, store, snap, format); err != nil {
			return nil, err
		}
		objects = objectDirs(repo)
	}
	jobs := filepath.Join(c.Dir, "jobs")
	if err := os.MkdirAll(jobs, 0o700); err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	job, err := os.MkdirTemp(jobs, opts.ID+"-")
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	co := &Checkout{job: job, meta: filepath.Join(job, "meta.git"), index: filepath.Join(job, "index"), Root: filepath.Join(job, "tree"), snap: snap}
	if co.lock, err = holdJob(job); err != nil {
		os.RemoveAll(job)
		return nil, err
	}
	if c.Overlay && repo != "" {
		var verified *lower
		if co.Root, verified, co.treeLock, err = c.baseTree(ctx, store, repo, job, snap, format); err != nil {
			co.Cleanup()
			return nil, err
		}
		co.upper, co.base = filepath.Join(job, "upper"), filepath.Join(job, "base.index")
		co.Dir = filepath.Join(co.Root, filepath.FromSlash(snap.Subdir))
		if opts.ReadOnly && len(snap.Layers) == 0 && (opts.Partial == nil || opts.Partial.Patch == nil) {
			// The verified checkout is then the snapshot's whole tree:
			// never run a call on one that is not the submitter's.
			if verified.treeID != snap.Tree {
				co.Cleanup()
				return nil, fmt.Errorf("codesnap: the checkout's tree %s is not the submitter's %s: refusing to run on different code", short(verified.treeID), short(snap.Tree))
			}
			co.shared = true
			return co, nil
		}
		if err := co.buildOverlay(ctx, store, c.lowerObjects(repo, snap), format, verified, opts.Partial, c.UserXattr); err != nil {
			co.Cleanup()
			return nil, err
		}
		return co, nil
	}
	co.Dir = filepath.Join(co.Root, filepath.FromSlash(snap.Subdir))
	packDir := co.meta
	if repo != "" && snap.dirty() {
		if objects, packDir, err = c.fullCopyHome(ctx, co, repo, snap, format); err != nil {
			co.Cleanup()
			return nil, err
		}
	}
	if err := co.build(ctx, store, objects, packDir, format); err != nil {
		co.Cleanup()
		return nil, err
	}
	if opts.Partial != nil && opts.Partial.Patch != nil {
		if err := co.applyPartial(ctx, store, opts.Partial); err != nil {
			co.Cleanup()
			return nil, err
		}
	}
	return co, nil
}

// ensureBase makes sure the cache's clone of snap.Repo has snap.Base, and
// pins it with a ref so no gc removes what copies borrow. It returns the
// git dir that has the base: the clone, where the worker's remote gave
// it, or else the base's own git dir (bases/, borrowing the clone) where
// a bundle gave it: a submitter's unpushed commits never go into the
// clone every copy borrows (dirtyhome.go), only to calls on a base that
// has them in its history already.
func (c *Cache) ensureBase(ctx context.Context, store *blobstore.Store, snap *Snapshot, format string) (string, error) {
	sum := sha256.Sum256([]byte(snap.Repo))
	name := hex.EncodeToString(sum[:10])
	repos := filepath.Join(c.Dir, "repos")
	repo := filepath.Join(repos, name+".git")
	if v, ok := c.pinned.Load(repo + "\x00" + snap.Base); ok {
		if _, err := os.Stat(filepath.Join(v.(string), "HEAD")); err == nil {
			return v.(string), nil
		}
	}
	if err := os.MkdirAll(repos, 0o700); err != nil {
		return "", fmt.Errorf("codesnap: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(repos, name+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(repo, "HEAD")); err != nil {
		if err := initBare(ctx, repo, format); err != nil {
			return "", err
		}
		if err := markLayout(repo); err != nil { // holds no dirty state (migrate.go)
			return "", err
		}
	}
	g := gitCmd{dir: repo}
	has := func() bool {
		_, err := g.run(ctx, "cat-file", "-e", snap.Base+"^{commit}")
		return err == nil
	}
	var why []string
	remote := c.allowedRemote(snap)
	if !has() && remote != "" {
		// All branches first (the cache then serves later bases too), then
		// the commit itself, for servers that allow fetching by id. The
		// URL is the worker's own (Remotes), after "--".
		_, err := g.run(ctx, "fetch", "-q", "--no-tags", "--prune", "--", remote, "+refs/heads/*:refs/remotes/origin/*")
		if err != nil {
			why = append(why, err.Error())
		}
		if !has() {
			if _, err := g.run(ctx, "fetch", "-q", "--no-tags", "--", remote, snap.Base); err != nil {
				why = append(why, err.Error())
			}
		}
	}
	if !has() && snap.Bundle != nil {
		home, err := c.bundleBase(ctx, store, repo, name, snap, format)
		if err == nil {
			c.pinned.Store(repo+"\x00"+snap.Base, home)
			return home, nil
		}
		why = append(why, err.Error())
	}
	if !has() {
		if remote == "" {
			return "", fmt.Errorf("codesnap: this worker cannot get base commit %s of %s: no bundle in the store had it, and it fetches from no remote of that repository (it never fetches from the URL a submission names): add the repository's URL to worker.remotes in the worker's settings (or brood worker --remote URL)%s",
				short(snap.Base), snap.Repo, joinWhy(why))
		}
		return "", fmt.Errorf("codesnap: this worker cannot get base commit %s of %s (from %s, and no bundle had it): push it, or give the worker access to the remote%s",
			short(snap.Base), snap.Repo, remote, joinWhy(why))
	}
	if _, err := g.run(ctx, "update-ref", "refs/brood/bases/"+snap.Base, snap.Base); err != nil {
		return "", fmt.Errorf("codesnap: pin the base in the cache: %w", err)
	}
	c.pinned.Store(repo+"\x00"+snap.Base, repo)
	return repo, nil
}

// bundleBase is the git dir of snap's base fetched from its bundle (under
// the clone's lock): bases/NAME-BASE.git, borrowing the clone's objects.
func (c *Cache) bundleBase(ctx context.Context, store *blobstore.Store, repo, name string, snap *Snapshot, format string) (string, error) {
	home := filepath.Join(c.Dir, "bases", name+"-"+snap.Base+".git")
	if _, err := os.Stat(filepath.Join(home, "HEAD")); err != nil {
		if err := os.MkdirAll(filepath.Dir(home), 0o700); err != nil {
			return "", fmt.Errorf("codesnap: %w", err)
		}
		if err := initBare(ctx, home, format, filepath.Join(repo, "objects")); err != nil {
			return "", err
		}
	}
	g := gitCmd{dir: home}
	if _, err := g.run(ctx, "cat-file", "-e", snap.Base+"^{commit}"); err != nil {
		if err := fetchBundle(ctx, store, g, home, snap); err != nil {
			return "", err
		}
		if _, err := g.run(ctx, "cat-file", "-e", snap.Base+"^{commit}"); err != nil {
			return "", fmt.Errorf("bundle: it lacks base %s", short(snap.Base))
		}
	}
	if _, err := g.run(ctx, "update-ref", "refs/brood/bases/"+snap.Base, snap.Base); err != nil {
		return "", fmt.Errorf("codesnap: pin the base in the cache: %w", err)
	}
	return home, nil
}

// objectDirs are the object directories of the cache's git dir repo (a
// clone, or a base's git dir borrowing one): its own, then those its
// alternates name. A copy's alternates name each (the child's
// confinement opens what they name, not what those name in turn).
func objectDirs(repo string) []string {
	dirs := []string{filepath.Join(repo, "objects")}
	data, err := os.ReadFile(filepath.Join(repo, "objects", "info", "alternates"))
	if err != nil {
		return dirs
	}
	for l := range strings.Lines(string(data)) {
		if l = strings.TrimSpace(l); filepath.IsAbs(l) {
			dirs = append(dirs, l)
		}
	}
	return dirs
}

// initBare creates a bare cache repository atomically: made aside, then
// renamed into place, so a crash never leaves half a repository there;
// its objects borrow from alternates, if any.
func initBare(ctx context.Context, repo, format string, alternates ...string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(repo), ".init-")
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	defer os.RemoveAll(tmp)
	g := workerGit(tmp)
	if _, err := g.run(ctx, "init", "-q", "--bare", "--object-format="+format, tmp); err != nil {
		return fmt.Errorf("codesnap: create the cache: %w", err)
	}
	for _, kv := range [][2]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}, {"core.hooksPath", "/dev/null"}, {"fetch.writeCommitGraph", "false"}} {
		if _, err := g.run(ctx, "config", kv[0], kv[1]); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
	}
	if err := writeLines(filepath.Join(tmp, "objects", "info", "alternates"), alternates); err != nil {
		return err
	}
	os.RemoveAll(repo) // a leftover without HEAD
	if err := os.Rename(tmp, repo); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	return nil
}

func fetchBundle(ctx context.Context, store *blobstore.Store, g gitCmd, repo string, snap *Snapshot) error {
	file := filepath.Join(repo, "brood-"+snap.Bundle.SHA256[:16]+".bundle")
	defer os.Remove(file)
	if err := store.GetFile(ctx, *snap.Bundle, file); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	heads, err := g.run(ctx, "bundle", "list-heads", file)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if !strings.Contains(heads, snap.Base) {
		return fmt.Errorf("bundle: its head is not %s (the submitter's HEAD moved while it was captured)", short(snap.Base))
	}
	if _, err := g.run(ctx, "fetch", "-q", "--no-tags", "--", file, "+HEAD:refs/brood/bundles/"+snap.Base); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}

// build makes the copy: our git dir and index (objects borrowed from the
// cache: objects) give the snapshot tree, checked against snap.Tree; the
// child's own repository has HEAD at the base and the base in its index,
// and the work tree holds the snapshot, so `git status` shows the dirty
// state. The dirty state's pack goes into the git dir packDir: the
// snapshot's dirty home (fullCopyHome), or ours without a base.
func (co *Checkout) build(ctx context.Context, store *blobstore.Store, objects []string, packDir, format string) error {
	snap := co.snap
	if _, err := workerGit(co.job).run(ctx, "init", "-q", "--bare", "--object-format="+format, co.meta); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if err := writeLines(filepath.Join(co.meta, "objects", "info", "alternates"), objects); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(co.meta, "info", "exclude"), []byte(snap.Excludes), 0o600); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if err := os.Mkdir(co.Root, 0o755); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	meta := co.metaGit("")
	if err := readTree(ctx, store, meta, packDir, co.job, snap); err != nil {
		return err
	}
	tree, err := meta.line(ctx, "write-tree")
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if tree != snap.Tree {
		return fmt.Errorf("codesnap: the copy's tree %s is not the submitter's %s: refusing to run on different code", short(tree), short(snap.Tree))
	}
	// The child's repository.
	if _, err := workerGit(co.job).run(ctx, "init", "-q", "--object-format="+format, co.Root); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if err := writeLines(filepath.Join(co.Root, ".git", "objects", "info", "alternates"), append(objects, filepath.Join(co.meta, "objects"))); err != nil {
		return err
	}
	child := workerGit(co.Root)
	// No background gc or maintenance in the child's repository: nothing
	// it starts that way may outlive it or write while the copy is read.
	for _, kv := range [][2]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}} {
		if _, err := child.run(ctx, "config", kv[0], kv[1]); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
	}
	branch := snap.Branch
	if branch == "" || strings.HasPrefix(branch, "-") {
		branch = ""
	}
	switch {
	case snap.Base != "" && branch != "":
		if _, err := child.run(ctx, "update-ref", "refs/heads/"+branch, snap.Base); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
		if _, err := child.run(ctx, "symbolic-ref", "HEAD", "refs/heads/"+branch); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
	case snap.Base != "":
		if _, err := child.run(ctx, "update-ref", "--no-deref", "HEAD", snap.Base); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
	case branch != "":
		child.run(ctx, "symbolic-ref", "HEAD", "refs/heads/"+branch)
	}
	if snap.Base != "" {
		if _, err := child.run(ctx, "read-tree", snap.Base); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
	}
	if _, err := meta.run(ctx, append(checkoutWorkers(), "checkout-index", "-a", "-u", "-f")...); err != nil {
		return fmt.Errorf("codesnap: write the copy: %w", err)
	}
	// Fresh stat data in the child's index, so its first git status does
	// not re-hash every file.
	child.run(ctx, "update-index", "-q", "--refresh")
	return nil
}

// checkoutWorkers makes a whole-tree checkout-index write its files from
// four processes (git's parallel checkout, over 100 files): on a loaded
// host a file's creation mostly waits (for the disk, for a CPU), and four
// writers overlap the waits. 20,000 files of 4 KiB at load 35–45 on this
// 2-core machine: 26–51 s with one writer, 2.2–5.4 s with four.
func checkoutWorkers() []string {
	return []string{"-c", "checkout.workers=4", "-c", "checkout.thresholdForParallelism=100"}
}

// metaGit runs git with our git dir and the snapshot index on the copy's
// work tree: nothing under Root/.git is read.
func (co *Checkout) metaGit(index string) gitCmd {
	if index == "" {
		index = co.index
	}
	return workerGit(co.Root, "GIT_DIR="+co.meta, "GIT_WORK_TREE="+co.Root, "GIT_INDEX_FILE="+index)
}

func writeLines(path string, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	return nil
}

// lockFile takes an exclusive flock on path; cancelling ctx gives up the
// wait (the lock, if it arrives late, is dropped at once).
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := flockFile(ctx, path, unix.LOCK_EX)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// flockFile opens path and takes a flock on it (LOCK_SH or LOCK_EX), held
// until the file is closed.
func flockFile(ctx context.Context, path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("codesnap: cache lock: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- unix.Flock(int(f.Fd()), how) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("codesnap: cache lock: %w", err)
		}
		return f, nil
	case <-ctx.Done():
		go func() { <-done; f.Close() }()
		return nil, ctx.Err()
	}
}

func joinWhy(why []string) string {
	if len(why) == 0 {
		return ""
	}
	return ": " + strings.Join(why, "; ")
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
