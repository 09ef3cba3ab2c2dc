package codesnap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
)

// Verified copies. The cache's checkout of a base commit (overlay.go) is
// shared by every copy and lives on disk where anything with the worker's
// rights can write, so it is checked before each use against the base's
// tree, never trusted because it exists:
//
//   - the first use in a worker process hashes every file (a fresh index
//     from the base's tree, refreshed: git reads each file's content) and
//     requires no file the tree lacks; the resulting index (blob ids from
//     the tree, stat data of the checked files) is kept in the worker's
//     memory, never on disk; calls that arrive meanwhile wait for it
//     (verifyTurn) and then make the later uses' check;
//   - a dirty checkout this process derived from one it had verified
//     (derive.go: the donor stat-checked, its files moved, only what
//     differs written, and each file written hashed against its blob)
//     is verified already: its index is kept the same way, and its first
//     use is the later uses' check;
//   - a later use compares the checkout with that index by stat data
//     (size, mtime, ctime, inode: writing a file changes its ctime, which
//     no unprivileged writer can set back), in this process (statplan.go:
//     a stat per file, a readdir per directory whose stamp changed, no git
//     process; one check shared by the calls that ask together, begun
//     after each asked: rounds.go), hashing a racily clean file; whatever
//     it cannot vouch for is checked by git (diff-files, ls-files
//     --others), which decides;
//   - the checkout's .git holds exactly the files the cache wrote, with
//     their content (HEAD, config, alternates; its index is replaced by the
//     verified one in each copy's upper layer).
//
// A checkout that fails is removed and made again, never used. The blob ids
// come from the base's tree, and the copy's tree made from them is checked
// against the submitter's (buildOverlay), so a poisoned object in the
// clone is refused too.

// errPoisoned marks a base checkout whose content is not its commit's.
var errPoisoned = errors.New("the cached base checkout differs from its commit")

// verifyBase checks the checkout at dir/tree against the snapshot's lower
// tree (lower.go: the base commit's, or base + dirty patch) and returns it
// verified; scratch is a directory for temporary index files. An error
// wrapping errPoisoned means the checkout must be rebuilt.
func (c *Cache) verifyBase(ctx context.Context, store *blobstore.Store, repo, dir, key, scratch string, snap *Snapshot, format string) (*lower, error) {
	tree := filepath.Join(dir, "tree")
	if err := checkBaseGitDir(tree, c.lowerObjects(repo, snap), snap.Base, format); err != nil {
		return nil, err
	}
	if m, err := mountIn(tree); err != nil {
		return nil, err
	} else if m != "" {
		return nil, fmt.Errorf("%w: %s is a mount point in it", errPoisoned, m)
	}
	v, seen := c.verified.Load(key)
	if seen {
		ok, err := v.(*lower).checkNow(ctx, tree, format)
		if err != nil {
			return nil, err
		}
		if ok {
			return c.sameIndex(tree, v.(*lower)) // (statcheck.go: no git process)
		}
	}
	// One call of this process checks by git at a time, and a call that
	// waited takes the index the other verified: the calls of a run
	// arrive together on a new checkout, and each hashing its 21,000
	// files itself (4 slots: 4 times the work on the same disk and
	// cores) took 2.5-4.2 s a call (docs/performance.md, "A dirty tree").
	release, err := c.verifyTurn(ctx, key)
	if err != nil {
		return nil, err
	}
	defer release()
	if v, seen = c.verified.Load(key); seen && v.(*lower).statClean(tree, format) {
		return c.sameIndex(tree, v.(*lower)) // another call of this process verified it
	}
	tmp, err := os.CreateTemp(scratch, "verify-*.index")
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	tmp.Close()
	index := tmp.Name()
	defer os.Remove(index)
	g := verifyGit(tree, index)
	if seen {
		ok, err := recheck(ctx, g, index, v.(*lower), format)
		if err != nil {
			return nil, err
		}
		if ok {
			return c.sameIndex(tree, v.(*lower))
		}
		c.verified.Delete(key)
		v.(*lower).unguard()
		os.Remove(index)
	}
	root, err := c.lowerTree(ctx, store, repo, scratch, snap, format)
	if err != nil {
		return nil, err
	}
	// By content: a fresh index has no stat data, so the refresh hashes
	// every file and keeps stat data only for those that match.
	if _, err := g.run(ctx, "read-tree", root); err != nil {
		return nil, fmt.Errorf("codesnap: verify base %s: %w", short(snap.Base), err)
	}
	g.run(ctx, "update-index", "-q", "--refresh") // exits 1 when a file differs; diff-files says which
	if err := clean(ctx, g); err != nil {
		return nil, err
	}
	l, err := readLower(ctx, g, index, root)
	if err != nil {
		return nil, err
	}
	if err := emptyGitlinks(tree, l.index, format); err != nil {
		return nil, err
	}
	l.base = snap.Base
	if l.child = l.index; root != snap.Base {
		l.objects = filepath.Join(c.dirtyHome(snap), "objects")
		if l.child, err = childIndex(ctx, c.lowerGitDir(repo, snap), tree, scratch, l.index, root, snap); err != nil {
			return nil, err
		}
	}
	if err := c.remember(key, repo, tree, format, l); err != nil {
		return nil, err
	}
	return l, nil
}

// sameIndex returns l with the checkout's .git/index at tree holding the
// bytes remember wrote there, written again from memory where they differ
// (a checkout made again, or a tamperer's): a call that uses the checkout
// in place reads it (git status, diff, grep --cached), and a rewritten
// index could name blobs of anyone's choosing for its paths.
func (c *Cache) sameIndex(tree string, l *lower) (*lower, error) {
	if b, err := os.ReadFile(filepath.Join(tree, ".git", "index")); err == nil && bytes.Equal(b, l.child) {
		return l, nil
	}
	if err := writeAtomic(filepath.Join(c.Dir, "trees"), filepath.Join(tree, ".git", "index"), l.child); err != nil {
		return nil, err
	}
	return l, nil
}

// writeAtomic writes data to path through a temporary file in dir (on
// path's file system, outside the checkout), renamed into place: a reader
// sees the old bytes or the new.
func writeAtomic(dir, path string, data []byte) error {
	f, err := os.CreateTemp(dir, ".index-*")
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("codesnap: %w", werr)
	}
	return nil
}

// readLower is the lower of root whose verified index git wrote to the
// file index (g reads root's objects), stamped with that file's mtime.
func readLower(ctx context.Context, g gitCmd, index, root string) (*lower, error) {
	b, err := os.ReadFile(index)
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	st, err := os.Stat(index)
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	l := &lower{tree: root, index: b, stamp: st.ModTime()}
	if l.treeID, err = g.line(ctx, "rev-parse", "--verify", "--end-of-options", root+"^{tree}"); err != nil {
		return nil, fmt.Errorf("codesnap: %s: %w", short(root), err)
	}
	return l, nil
}

// verifyGit runs git's checks of the checkout at tree with the file index
// index, in the checkout's own .git (its config is the one buildBaseTree
// wrote, checkBaseGitDir says so; objects through its alternates), with
// no system or global configuration: no config file anyone with the
// worker's rights can edit (the clone's, ~/.gitconfig) can loosen git's
// stat check (core.checkStat, core.trustctime, core.ignoreStat) or add
// attributes that convert what git hashes.
func verifyGit(tree, index string) gitCmd {
	return gitCmd{dir: tree, env: []string{"GIT_DIR=" + filepath.Join(tree, ".git"), "GIT_WORK_TREE=" + tree, "GIT_INDEX_FILE=" + index,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}}
}

// recheck is git's check of a checkout against its verified index l, in
// the file index that g names: ok when git finds it clean.
func recheck(ctx context.Context, g gitCmd, index string, l *lower, format string) (ok bool, err error) {
	if err := os.WriteFile(index, l.index, 0o600); err != nil {
		return false, fmt.Errorf("codesnap: %w", err)
	}
	// Dated when the index was verified, not now: git checks by content
	// the entries changed no earlier (racily clean), as it would have
	// then; dated now, a file rewritten within the second of its
	// verified stat data would pass git's check (seconds only).
	if err := os.Chtimes(index, l.stamp, l.stamp); err != nil {
		return false, fmt.Errorf("codesnap: %w", err)
	}
	return clean(ctx, g) == nil && emptyGitlinks(g.dir, l.index, format) == nil, nil
}

// verifyTurn waits for key's turn to be checked by git in this process
// (see verifyBase) and returns its release.
func (c *Cache) verifyTurn(ctx context.Context, key string) (func(), error) {
	sem, _ := c.verifying.LoadOrStore(key, make(chan struct{}, 1))
	ch := sem.(chan struct{})
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// clean: no tracked file of the index differs from the work tree (by stat
// data, or content where stat data is missing), and no other file is there.
func clean(ctx context.Context, g gitCmd) error {
	out, err := g.run(ctx, "diff-files", "--name-only", "-z")
	if err != nil {
		return fmt.Errorf("codesnap: verify the base checkout: %w", err)
	}
	if out != "" {
		return fmt.Errorf("%w: %s changed", errPoisoned, firstNUL(out))
	}
	out, err = g.run(ctx, "ls-files", "-z", "--others", "--directory")
	if err != nil {
		return fmt.Errorf("codesnap: verify the base checkout: %w", err)
	}
	if out != "" {
		return fmt.Errorf("%w: %s added", errPoisoned, firstNUL(out))
	}
	return nil
}

func firstNUL(s string) string {
	s, _, _ = strings.Cut(s, "\x00")
	return clip(s)
}

// baseConfig is the whole .git/config of a base checkout (buildBaseTree
// writes it): no hooks, no fsmonitor, nothing git would run.
func baseConfig(format string) string {
	version, ext := "0", ""
	if format == "sha256" {
		version, ext = "1", "[extensions]\n\tobjectformat = sha256\n"
	}
	return "[core]\n\trepositoryformatversion = " + version + "\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n" +
		"[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n" + ext
}

// checkBaseGitDir: the checkout's .git holds what buildBaseTree wrote and
// nothing else (its index, which each copy's upper layer replaces, may
// differ).
func checkBaseGitDir(tree string, objects []string, base, format string) error {
	gitDir := filepath.Join(tree, ".git")
	want := map[string]string{
		"HEAD":                    base + "\n",
		"config":                  baseConfig(format),
		"objects/info/alternates": strings.Join(objects, "\n") + "\n",
		"index":                   "",
	}
	dirs := map[string]bool{".": true, "objects": true, "objects/info": true, "objects/pack": true, "refs": true, "refs/heads": true, "refs/tags": true}
	seen := 0
	err := filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(gitDir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && dirs[rel]:
			return nil
		case d.Type().IsRegular():
			content, ok := want[rel]
			if !ok {
				break
			}
			seen++
			if rel == "index" {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if string(b) != content {
				return fmt.Errorf("%w: .git/%s was changed", errPoisoned, rel)
			}
			return nil
		}
		return fmt.Errorf("%w: .git/%s is not the cache's", errPoisoned, rel)
	})
	if err != nil {
		if errors.Is(err, errPoisoned) {
			return err
		}
		return fmt.Errorf("%w: %v", errPoisoned, err)
	}
	if seen != len(want) {
		return fmt.Errorf("%w: its .git lacks files", errPoisoned)
	}
	return nil
}
