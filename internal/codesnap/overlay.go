package codesnap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/isolate"
)

// Overlay copies (Cache.Overlay). The cache keeps one checkout per
// lower tree (lower.go: a base commit, or base + dirty state) under
// Dir/trees, made once and never written again while it has that name: a
// work tree of the tree and the child's repository in it (HEAD at the
// base, the base in its index with the checkout's stat data, objects
// borrowed from the clone). A new dirty state's checkout is made from an
// idle earlier one where it can (derive.go), which is then renamed to
// the new name and only its differing files rewritten. A call's copy is an overlay over it, which the
// child mounts in its own mount namespace (isolate.Mount): the upper layer,
// in the call's job directory, starts with what the snapshot (and an
// earlier attempt's partial change) has that the base has not — its files
// written, its deletions as whiteouts — so making a copy costs the dirty
// state, not the tree. The child's writes land in the upper layer only;
// its change is read from there (overlayResult), the way an overlay
// child's is locally (internal/isolate).

// baseTree returns the cache's checkout of snap's lower tree (lower.go:
// snap.Base, or base + dirty patch), making it if needed and verifying it
// (verify.go) — a checkout that fails is removed and made again — with its
// verified index and a shared lock on it held until the returned file is
// closed (Prune removes only what no copy holds). scratch is a directory
// for temporary files.
func (c *Cache) baseTree(ctx context.Context, store *blobstore.Store, repo, scratch string, snap *Snapshot, format string) (string, *lower, *os.File, error) {
	key := lowerKey(snap)
	trees := filepath.Join(c.Dir, "trees")
	if err := os.MkdirAll(trees, 0o700); err != nil {
		return "", nil, nil, fmt.Errorf("codesnap: %w", err)
	}
	lock, dir := filepath.Join(trees, key+".lock"), filepath.Join(trees, key)
	wait := false // (see below)
	for rebuilt := 0; ; {
		f, err := flockFile(ctx, lock, unix.LOCK_SH)
		if err != nil {
			return "", nil, nil, err
		}
		_, missing := os.Stat(filepath.Join(dir, "tree", ".git"))
		if missing == nil {
			index, err := c.verifyBase(ctx, store, repo, dir, key, scratch, snap, format)
			if err == nil {
				now := time.Now()
				_ = os.Chtimes(lock, now, now) // when it was last used, for Prune
				return filepath.Join(dir, "tree"), index, f, nil
			}
			if !errors.Is(err, errPoisoned) || rebuilt >= 2 {
				// (a checkout made afresh that still differs: the clone's
				// objects are damaged; never used, never looped on)
				f.Close()
				return "", nil, nil, fmt.Errorf("codesnap: base %s: %w", short(snap.Base), err)
			}
		}
		f.Close()
		// Made under the exclusive lock, aside, then renamed into place:
		// a checker sees a whole checkout or none. A checkout that fails
		// verification there too is removed first. For a missing one the
		// lock is first tried without waiting: a call that made it
		// meanwhile holds it shared for its copy's life, and waiting for
		// that would stall this call as long (for ever in a process that
		// holds its copies until every call is ready: TestPruneTrees hung
		// so under load); the checkout is then there to take.
		how := unix.LOCK_EX
		if missing != nil && !wait {
			how |= unix.LOCK_NB
		}
		ex, err := flockFile(ctx, lock, how)
		if how&unix.LOCK_NB != 0 && errors.Is(err, unix.EWOULDBLOCK) {
			wait = true // once: still missing after that, wait for the lock
			continue
		}
		if err != nil {
			return "", nil, nil, err
		}
		if _, err := os.Stat(dir); err == nil {
			if _, verr := c.verifyBase(ctx, store, repo, dir, key, scratch, snap, format); errors.Is(verr, errPoisoned) {
				err = discard(trees, dir)
				rebuilt++
			}
		}
		if _, serr := os.Stat(dir); serr != nil && err == nil {
			err = c.buildBaseTree(ctx, store, trees, key, repo, snap, format)
		}
		ex.Close()
		if err != nil {
			return "", nil, nil, err
		}
	}
}

// discard moves a bad checkout aside (so it is gone from its name at once)
// and removes it.
func discard(trees, dir string) error {
	aside, err := os.MkdirTemp(trees, ".bad-")
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	defer removeAll(aside)
	if err := os.Rename(dir, filepath.Join(aside, "x")); err != nil {
		return fmt.Errorf("codesnap: remove a bad base checkout: %w", err)
	}
	return nil
}

// buildBaseTree checks snap's lower tree out into trees/key (under key's
// lock): its .git holds only what checkBaseGitDir expects. A dirty lower
// is derived from a previous one where this process has one to give
// (derive.go), and is then verified already; otherwise every file is
// written, and verifyBase hashes them all on first use.
func (c *Cache) buildBaseTree(ctx context.Context, store *blobstore.Store, trees, key, repo string, snap *Snapshot, format string) error {
	if old, _ := filepath.Glob(filepath.Join(trees, ".tmp-"+key+"-*")); len(old) > 0 {
		for _, o := range old {
			removeAll(o)
		}
	}
	tmp, err := os.MkdirTemp(trees, ".tmp-"+key+"-")
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	defer removeAll(tmp)
	tree := filepath.Join(tmp, "tree")
	root, err := c.lowerTree(ctx, store, repo, tmp, snap, format)
	if err != nil {
		return err
	}
	if root != snap.Base {
		// A new dirty state: from this process's previous checkout of a
		// near one where it can (derive.go), writing only what differs.
		l, err := c.deriveBaseTree(ctx, trees, key, tmp, repo, root, snap, format)
		if err != nil {
			return err
		}
		if l != nil {
			if err := os.Rename(tmp, filepath.Join(trees, key)); err != nil {
				return fmt.Errorf("codesnap: %w", err)
			}
			return c.remember(key, repo, filepath.Join(trees, key, "tree"), format, l)
		}
	}
	if err := initBaseGit(tree, c.lowerObjects(repo, snap), snap.Base, format); err != nil {
		return err
	}
	g := workerGit(tree)
	steps := [][]string{
		{"read-tree", root},
		// With the files' stat data in the index as they are written, so
		// a child's git status does not re-hash every file; by parallel
		// workers (checkoutWorkers).
		append(checkoutWorkers(), "checkout-index", "-a", "-f", "-u"),
	}
	if root != snap.Base {
		// The checkout's index is the base commit's (a dirty checkout's
		// status is then the submitter's), keeping the stat data of the
		// files the dirty state left as they were.
		steps = append(steps, []string{"read-tree", "-m", root, snap.Base})
	}
	for _, s := range steps {
		if _, err := g.run(ctx, s...); err != nil {
			return fmt.Errorf("codesnap: check out base %s: %w", short(snap.Base), err)
		}
	}
	if err := os.Rename(tmp, filepath.Join(trees, key)); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	return nil
}

// initBaseGit makes a base checkout's .git in tree (which may hold files
// already): exactly what checkBaseGitDir expects, no index yet — what
// `git init --template=` makes (files refs), without a git process.
func initBaseGit(tree string, objects []string, base, format string) error {
	gitDir := filepath.Join(tree, ".git")
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(gitDir, filepath.FromSlash(d)), 0o755); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
	}
	for name, content := range map[string]string{"config": baseConfig(format), "HEAD": base + "\n"} {
		if err := os.WriteFile(filepath.Join(gitDir, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
	}
	return writeLines(filepath.Join(gitDir, "objects", "info", "alternates"), objects)
}

// buildOverlay makes the call's upper layer over the base checkout at
// co.Root: our git dir and indexes give the snapshot's tree (checked
// against snap.Tree, as build does) and the start tree (snapshot plus
// partial); what the start tree has that the base has not is written into
// the upper layer.
func (co *Checkout) buildOverlay(ctx context.Context, store *blobstore.Store, objects []string, format string, l *lower, partial *Result, xattr bool) error {
	snap := co.snap
	co.lowerTree = l.tree
	if err := co.initMeta(ctx, objects, format); err != nil {
		return err
	}
	for _, d := range []string{co.upper, filepath.Join(co.job, "work")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
	}
	// The lower's index is the verified one (verify.go); ours are links to
	// it until git replaces them. The child's repository gets the base
	// commit's (the same for a clean lower), in the upper layer, over the
	// checkout's own.
	if err := os.WriteFile(co.base, l.index, 0o600); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(co.upper, ".git"), 0o755); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if err := os.WriteFile(filepath.Join(co.upper, ".git", "index"), l.child, 0o644); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if err := linkIndex(co.base, co.index); err != nil {
		return err
	}
	// A dirty lower holds the dirty patch already: only the run's layers
	// go on it.
	patches, dirty, onto := snap.patches(), snap.Patch != nil, "base "+short(snap.Base)
	if snap.Pack != nil && l.tree != snap.DirtyTree {
		return fmt.Errorf("codesnap: the lower checkout's tree %s is not the dirty tree %s", short(l.tree), short(snap.DirtyTree))
	}
	if l.tree != snap.Base {
		patches, dirty, onto = snap.Layers, false, "the submitter's tree"
	}
	if err := applyPatches(ctx, store, co.overlayGit(co.index), co.job, patches, dirty, onto); err != nil {
		return err
	}
	if tree, err := co.overlayGit(co.index).line(ctx, "write-tree"); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	} else if tree != snap.Tree {
		return fmt.Errorf("codesnap: the copy's tree %s is not the submitter's %s: refusing to run on different code", short(tree), short(snap.Tree))
	}
	start := co.index
	if partial != nil && partial.Patch != nil {
		if partial.Tree != snap.Tree {
			return fmt.Errorf("codesnap: the partial patch is against tree %s, not this snapshot's %s", short(partial.Tree), short(snap.Tree))
		}
		start = filepath.Join(co.job, "start.index")
		if err := linkIndex(co.index, start); err != nil {
			return err
		}
		if err := co.applyCached(ctx, store, start, partial.Patch, "the partial patch", "the snapshot"); err != nil {
			return err
		}
	}
	tree := snap.Tree
	if start != co.index {
		var err error
		if tree, err = co.overlayGit(start).line(ctx, "write-tree"); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
	}
	if err := co.fillUpper(ctx, start, tree); err != nil {
		return err
	}
	if err := co.branchInUpper(ctx); err != nil {
		return err
	}
	co.Mount = &isolate.Mount{Root: co.Root, Upper: co.upper, Work: filepath.Join(co.job, "work"), Dir: co.Dir, UserXattr: xattr}
	return nil
}

// initMeta creates our git dir for the copy: objects borrowed from the
// cache, the submitter's excludes.
func (co *Checkout) initMeta(ctx context.Context, objects []string, format string) error {
	// No templates (hooks, samples): nothing runs here, and copying them is
	// most of what init costs.
	if _, err := workerGit(co.job).run(ctx, "init", "-q", "--bare", "--template=", "--object-format="+format, co.meta); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if err := writeLines(filepath.Join(co.meta, "objects", "info", "alternates"), objects); err != nil {
		return err
	}
	if err := writeLines(filepath.Join(co.meta, "info", "exclude"), []string{co.snap.Excludes}); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	return nil
}

// overlayGit runs git with our git dir and index on the upper layer as
// work tree: files are hashed from there, never from the child's view.
func (co *Checkout) overlayGit(index string) gitCmd {
	return workerGit(co.upper, "GIT_DIR="+co.meta, "GIT_WORK_TREE="+co.upper, "GIT_INDEX_FILE="+index)
}

// applyCached applies a patch from the store to an index (its new blobs go
// to our git dir's objects).
func (co *Checkout) applyCached(ctx context.Context, store *blobstore.Store, index string, ref *blobstore.Ref, what, onto string) error {
	if ref == nil {
		return nil
	}
	file := filepath.Join(co.job, strings.ReplaceAll(what, " ", "-")+".patch")
	if err := store.GetFile(ctx, *ref, file); err != nil {
		return fmt.Errorf("codesnap: %s: %w", what, err)
	}
	if _, err := co.overlayGit(index).run(ctx, "apply", "--cached", "--whitespace=nowarn", file); err != nil {
		return fmt.Errorf("codesnap: %s does not apply to %s: %w", what, onto, err)
	}
	return nil
}

// fillUpper writes into the upper layer what the start index (whose tree
// is tree) has that the lower checkout has not: changed and added files checked out there, deleted ones as
// whiteouts (a directory the start tree lacks altogether as one).
func (co *Checkout) fillUpper(ctx context.Context, start, tree string) error {
	g := co.overlayGit(start)
	raw, err := g.run(ctx, "diff-tree", "-r", "-z", "--no-renames", "--raw", co.lowerTree, tree)
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	var written, deleted []string
	for _, e := range parseRaw(raw) {
		if e.status == 'D' {
			deleted = append(deleted, e.path)
		} else {
			written = append(written, e.path)
		}
	}
	if len(written) > 0 {
		g.stdin = []byte(strings.Join(written, "\x00") + "\x00")
		if _, err := g.run(ctx, "checkout-index", "-f", "-z", "--stdin"); err != nil {
			return fmt.Errorf("codesnap: write the copy's changes: %w", err)
		}
		g.stdin = nil
	}
	outs, err := co.whiteouts(ctx, tree, written, deleted)
	if err != nil {
		return err
	}
	for _, p := range outs {
		up := filepath.Join(co.upper, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(up), 0o755); err != nil {
			return fmt.Errorf("codesnap: %w", err)
		}
		if err := unix.Mknod(up, unix.S_IFCHR|0o000, 0); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("codesnap: whiteout %s: %w", p, err)
		}
	}
	return co.fixUpperDirs()
}

// whiteouts are the upper-layer paths that hide the base's deleted files:
// the highest directory the start tree lacks altogether, else the file;
// none beneath a file that replaces a directory, nor for a file that a
// directory replaces (the upper entry hides the lower one whole).
func (co *Checkout) whiteouts(ctx context.Context, tree string, written, deleted []string) ([]string, error) {
	if len(deleted) == 0 {
		return nil, nil
	}
	files, dirs := map[string]bool{}, map[string]bool{}
	for _, p := range written {
		files[p] = true
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	// Which ancestors of deleted files the start tree still has.
	var ask []string
	seen := map[string]bool{}
	for _, p := range deleted {
		for d := path.Dir(p); d != "." && !seen[d] && !strings.Contains(d, "\n"); d = path.Dir(d) {
			seen[d] = true
			ask = append(ask, d)
		}
	}
	gone := map[string]bool{}
	if len(ask) > 0 {
		g := co.overlayGit(co.index)
		var in bytes.Buffer
		for _, d := range ask {
			fmt.Fprintf(&in, "%s:%s\n", tree, d)
		}
		g.stdin = in.Bytes()
		out, err := g.run(ctx, "cat-file", "--batch-check=%(objecttype)")
		if err != nil {
			return nil, fmt.Errorf("codesnap: %w", err)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for i, d := range ask {
			if i < len(lines) && strings.HasSuffix(lines[i], "missing") {
				gone[d] = true
			}
		}
	}
	var outs []string
	made := map[string]bool{}
	for _, p := range deleted {
		if dirs[p] {
			continue
		}
		top, covered := p, false
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if files[d] {
				covered = true
			}
			if gone[d] {
				top = d
			}
		}
		if !covered && !made[top] {
			made[top] = true
			outs = append(outs, top)
		}
	}
	return outs, nil
}

// branchInUpper puts the child's repository on the submitter's branch (at
// the base) through the upper layer: the lower checkout's HEAD is detached.
func (co *Checkout) branchInUpper(ctx context.Context) error {
	b := co.snap.Branch
	if b == "" || strings.HasPrefix(b, "-") {
		return nil
	}
	if _, err := workerGit(co.job).run(ctx, "check-ref-format", "refs/heads/"+b); err != nil {
		return nil // not a name git takes: detached, as build leaves it
	}
	ref := filepath.Join(co.upper, ".git", "refs", "heads", filepath.FromSlash(b))
	if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if err := os.WriteFile(ref, []byte(co.snap.Base+"\n"), 0o644); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if err := os.WriteFile(filepath.Join(co.upper, ".git", "HEAD"), []byte("ref: refs/heads/"+b+"\n"), 0o644); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	return co.fixUpperDirs()
}

// fixUpperDirs gives the upper layer's directories the mode and times of
// the base checkout's (an upper directory's attributes are what the child
// sees).
func (co *Checkout) fixUpperDirs() error {
	return filepath.WalkDir(co.upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == co.upper {
			return err
		}
		rel, _ := filepath.Rel(co.upper, p)
		var st unix.Stat_t
		if unix.Lstat(filepath.Join(co.Root, rel), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return nil
		}
		_ = unix.Chmod(p, st.Mode&0o7777)
		_ = unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
		return nil
	})
}

// rawEntry is one line of `git diff-tree --raw -z`.
type rawEntry struct {
	status byte
	path   string
}

func parseRaw(out string) []rawEntry {
	var es []rawEntry
	f := strings.Split(out, "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		meta := f[i]
		if meta == "" || meta[0] != ':' {
			break
		}
		es = append(es, rawEntry{status: meta[len(meta)-1], path: f[i+1]})
	}
	return es
}

// linkIndex makes dst an index file with src's entries for git to work on:
// a hard link where it can be, for git never writes an index in place (it
// writes index.lock and renames it over), so src is never changed.
func linkIndex(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	return copyFile(src, dst)
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	return nil
}
