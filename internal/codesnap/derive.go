package codesnap

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A new dirty lower checkout derived from the worker's previous one.
//
// A developer's next submission differs from the previous one by a few
// files, but its dirty state is a lower checkout of its own (lowerKey):
// made in full, every file of the tree is written (checkout-index) and, on
// first use, hashed (verifyBase). Instead buildBaseTree turns one of this
// process's verified dirty lowers into the new one:
//
//   - the donor is one this process verified (c.verified: memory, never
//     disk) with the same clone and object format, not in use (its lock
//     taken exclusively without waiting: no copy holds it), provably still
//     its verified tree now (statClean), never a clean snapshot's base
//     checkout (long-lived, shared by clean runs); of those, the one whose
//     tree differs least from the new one (diff-tree), and not by more than
//     a quarter of its files (farShare), nor in a .gitattributes file (the
//     files it keeps were written under its attributes);
//   - its work tree is moved (renamed: every file keeps its inode and
//     ctime, so the stat check keeps its meaning) into the new build's
//     directory, and it is forgotten (its name is gone from trees/);
//   - its .git is made afresh, as a full build makes it, and git read-tree
//     -m -u from the donor's verified index (its entries racily clean
//     against its stamp smudged: smudgeRacy) writes only the paths whose
//     blob or mode differs, and removes the ones the new tree lacks;
//   - every path written is hashed against the new tree's blob id, so a
//     poisoned object in the clone is refused, as verifyBase refuses it;
//   - the index read-tree wrote (the donor's stat data for the files kept,
//     git's for the ones written) is the new lower's verified index, kept
//     in this process's memory: its first use is a stat check, which also
//     proves the tree holds nothing else;
//   - the child's index (the base commit's tree) is the donor's, on the
//     same base, with the stat data of the new verified index where a
//     file is the base's (childindex.go), as git's read-tree -m makes it.
//
// No donor, or a step that fails other than the hash check: the full build.

// lowerHome is the clone and object format a lower was verified with
// (the clone, not a base's git dir: a donor on another base of the same
// repository serves, its objects read through its dirty home's
// alternates).
type lowerHome struct{ repo, format string }

// remember keeps l as key's verified lower in this process, its indexes
// without cached tree ids (withoutCacheTree), and writes its child index
// as the checkout's .git/index (at tree), which each use compares with
// it (sameIndex).
func (c *Cache) remember(key, repo, tree, format string, l *lower) error {
	index, ok := withoutCacheTree(l.index, format)
	child, ok2 := withoutCacheTree(l.child, format)
	if !ok || !ok2 {
		return fmt.Errorf("codesnap: the verified index of %s is in a form brood does not read (index.version 2 or 3 expected)", key)
	}
	l.index, l.child = index, child
	if l.plan, ok = newStatPlan(index, format); !ok {
		return fmt.Errorf("codesnap: the verified index of %s is in a form brood does not read (index.version 2 or 3 expected)", key)
	}
	if err := writeAtomic(filepath.Join(c.Dir, "trees"), filepath.Join(tree, ".git", "index"), l.child); err != nil {
		return err
	}
	c.homes.Store(key, lowerHome{c.cloneOf(repo), format})
	c.verified.Store(key, l)
	return nil
}

// donor is a verified lower that may give its work tree to a new one, and
// the paths of its tree that differ from the new tree (diff-tree's raw).
type donor struct {
	key     string
	l       *lower
	changes []change
}

// maxDonors bounds how many candidates are compared with the new tree
// (one diff-tree each).
const maxDonors = 8

// farShare: a donor whose tree differs from the new one in more than a
// 1/farShare of its files is not taken, but left for its own next state.
// A worker serving two trees in turn (a clean clone and a dirty one, as
// scripts/bench-fleet-dirty does) holds one checkout of each; taking the
// other tree's would rewrite half the files, and leave the next
// submission of that tree nothing near to start from.
const farShare = 4

// deriveBaseTree makes tmp/tree, snap's dirty lower checkout of root, from
// a donor and returns it verified; nil (and no error) when no donor could
// be taken or the derivation failed: the caller makes it in full. An
// error is a written file that is not its blob (errPoisoned).
func (c *Cache) deriveBaseTree(ctx context.Context, trees, key, tmp, repo, root string, snap *Snapshot, format string) (*lower, error) {
	home := c.lowerGitDir(repo, snap)
	ds := c.donors(ctx, trees, key, repo, home, root, format)
	if len(ds) == 0 {
		return nil, nil
	}
	d := c.takeDonor(trees, tmp, format, ds)
	if d == nil {
		return nil, nil
	}
	tree := filepath.Join(tmp, "tree")
	l, err := deriveFrom(ctx, tree, tmp, home, c.lowerObjects(repo, snap), d.l, d.changes, root, snap, format)
	if err != nil {
		removeAll(tree)
		if errors.Is(err, errPoisoned) {
			return nil, fmt.Errorf("codesnap: base %s: a checkout derived from the previous one: %w: the worker's clone %s may hold a damaged object; remove that directory and the worker fetches it again", short(snap.Base), err, repo)
		}
		return nil, nil
	}
	return l, nil
}

// donors are this process's verified dirty lowers of repo in format other
// than key whose checkout is there, fewest differing paths first; home is
// the new lower's git dir (its dirty home), which has root.
func (c *Cache) donors(ctx context.Context, trees, key, repo, home, root, format string) []donor {
	var ds []donor
	same := lowerHome{c.cloneOf(repo), format}
	c.verified.Range(func(k, v any) bool {
		l := v.(*lower)
		h, ok := c.homes.Load(k)
		// (a clean snapshot's checkout has a commit for its tree)
		if k == key || !ok || h != same || l.tree != l.treeID || l.objects == "" {
			return true
		}
		if _, err := os.Lstat(filepath.Join(trees, k.(string), "tree", ".git")); err != nil {
			return true
		}
		ds = append(ds, donor{key: k.(string), l: l})
		return len(ds) < maxDonors
	})
	kept := ds[:0]
	for _, d := range ds {
		// (the donor's tree is in its own dirty home, read by this
		// process's git only: dirtyhome.go)
		g := workerGit(trees, "GIT_DIR="+home, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+d.l.objects)
		out, err := g.run(ctx, "diff-tree", "-r", "-z", "--no-renames", d.l.tree, root)
		if err != nil {
			continue
		}
		d.changes = parseChanges(out)
		if changesAttributes(d.changes) {
			continue
		}
		if len(d.l.index) < 12 || len(d.changes)*farShare > int(binary.BigEndian.Uint32(d.l.index[8:12])) {
			continue // (the index's entry count)
		}
		kept = append(kept, d)
	}
	slices.SortStableFunc(kept, func(a, b donor) int { return cmp.Compare(len(a.changes), len(b.changes)) })
	return kept
}

// changesAttributes: a diff-tree's changes name a .gitattributes file. The files a donor keeps were written under its attributes (eol,
// working-tree-encoding, ident): under the new tree's they could be other
// bytes for the same blobs, which neither git nor the stat check would
// see, so such a donor is not taken.
func changesAttributes(cs []change) bool {
	for _, c := range cs {
		if p := c.path; p == ".gitattributes" || strings.HasSuffix(p, "/.gitattributes") {
			return true
		}
	}
	return false
}

// takeDonor moves the work tree of the first of ds it may take to
// tmp/tree, forgets that donor and returns it (nil: none).
func (c *Cache) takeDonor(trees, tmp, format string, ds []donor) *donor {
	for i := range ds {
		if c.take(trees, tmp, format, ds[i]) {
			return &ds[i]
		}
	}
	return nil
}

// take: see takeDonor.
func (c *Cache) take(trees, tmp, format string, d donor) bool {
	f, err := os.OpenFile(filepath.Join(trees, d.key+".lock"), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false // a copy holds it, or it is being made or pruned
	}
	dir := filepath.Join(trees, d.key)
	if v, ok := c.verified.Load(d.key); !ok || v.(*lower) != d.l || !d.l.statClean(filepath.Join(dir, "tree"), format) {
		return false
	}
	moved := filepath.Join(tmp, "donor")
	d.l.unguard() // (tripped by the rename anyway)
	if err := os.Rename(dir, moved); err != nil {
		return false
	}
	// Gone from trees/ under its lock: forgotten before anyone may look.
	c.verified.CompareAndDelete(d.key, d.l)
	c.homes.Delete(d.key)
	defer removeAll(moved)
	return os.Rename(filepath.Join(moved, "tree"), filepath.Join(tmp, "tree")) == nil
}

// deriveFrom turns the donor's work tree, moved to tree, into the
// checkout of root (see above) and returns it verified; changes are the
// paths root changes from the donor's tree; tmp is for temporary files.
func deriveFrom(ctx context.Context, tree, tmp, home string, objects []string, d *lower, changes []change, root string, snap *Snapshot, format string) (*lower, error) {
	if err := removeAll(filepath.Join(tree, ".git")); err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	if err := initBaseGit(tree, objects, snap.Base, format); err != nil {
		return nil, err
	}
	start, ok := smudgeRacy(d.index, d.stamp, format)
	if !ok {
		return nil, errors.New("codesnap: the donor's index is not one the stat check reads")
	}
	index := filepath.Join(tmp, "derived.index")
	defer os.Remove(index)
	if err := os.WriteFile(index, start, 0o600); err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	g := workerGit(tree, "GIT_DIR="+filepath.Join(tree, ".git"), "GIT_WORK_TREE="+tree, "GIT_INDEX_FILE="+index,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES="+d.objects) // (the donor's tree)
	if _, err := g.run(ctx, append(checkoutWorkers(), "read-tree", "-m", "-u", d.tree, root)...); err != nil {
		return nil, fmt.Errorf("codesnap: derive the checkout: %w", err)
	}
	if err := checkWritten(ctx, g, tree, changes, format); err != nil {
		return nil, err
	}
	l, err := readLower(ctx, g, index, root)
	if err != nil {
		return nil, err
	}
	l.base, l.objects = snap.Base, objects[0]
	if child, ok := childFromDonor(d.child, l.index, format); ok && d.base == snap.Base {
		l.child = child // (childindex.go: no git process)
	} else if l.child, err = childIndex(ctx, home, tree, tmp, l.index, root, snap); err != nil {
		return nil, err
	}
	// The checkout's own index, as a full build leaves it: the base
	// commit's, with the checkout's stat data.
	if err := os.WriteFile(filepath.Join(tree, ".git", "index"), l.child, 0o644); err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	return l, nil
}

// change is one path of `git diff-tree -r -z` (raw): its new mode and
// blob id, and its status.
type change struct {
	mode, oid, path string
	status          byte
}

func parseChanges(out string) []change {
	var cs []change
	f := strings.Split(out, "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) != 5 || meta[4] == "" {
			break
		}
		cs = append(cs, change{mode: meta[1], oid: meta[3], status: meta[4][0], path: f[i+1]})
	}
	return cs
}

// checkWritten hashes every path the derivation wrote against its blob id
// in the new tree: by its bytes here, and where they differ by git's
// hash-object (the bytes git converted on checkout, text and eol
// attributes, hash as the blob when converted back). A file that is still
// not its blob is errPoisoned.
func checkWritten(ctx context.Context, g gitCmd, tree string, cs []change, format string) error {
	_, newHash := objectHash(format)
	var ask []change
	for _, c := range cs {
		if c.status == 'D' {
			continue
		}
		if c.mode == "160000" { // a gitlink: an empty directory (statcheck.go)
			if names, err := os.ReadDir(filepath.Join(tree, filepath.FromSlash(c.path))); err != nil || len(names) > 0 {
				return fmt.Errorf("%w: submodule directory %s is not an empty directory", errPoisoned, clip(c.path))
			}
			continue
		}
		if c.mode != "100644" && c.mode != "100755" && c.mode != "120000" {
			return fmt.Errorf("codesnap: %s has mode %s, which a derived checkout does not write", clip(c.path), c.mode)
		}
		sum, ok := blobHash(filepath.Join(tree, filepath.FromSlash(c.path)), c.mode, newHash)
		switch {
		case !ok:
			return fmt.Errorf("%w: %s is not the file git wrote", errPoisoned, clip(c.path))
		case hex.EncodeToString(sum) == c.oid:
		case c.mode == "120000" || strings.ContainsAny(c.path, "\n\r"):
			return fmt.Errorf("%w: %s is not blob %s", errPoisoned, clip(c.path), short(c.oid))
		default:
			ask = append(ask, c)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	var in strings.Builder
	for _, c := range ask {
		in.WriteString(c.path + "\n")
	}
	g.stdin = []byte(in.String())
	out, err := g.run(ctx, "hash-object", "--stdin-paths")
	if err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	got := strings.Fields(out)
	for i, c := range ask {
		if i >= len(got) || got[i] != c.oid {
			return fmt.Errorf("%w: %s is not blob %s", errPoisoned, clip(c.path), short(c.oid))
		}
	}
	return nil
}

// blobHash is the blob id of the file at p as git would store it for a
// tree entry of mode (a symlink's target; a regular file's bytes, its
// executable bit as mode says); ok is false for anything else there.
func blobHash(p, mode string, newHash func() hash.Hash) (sum []byte, ok bool) {
	h := newHash()
	if mode == "120000" {
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			return nil, false
		}
		target, err := os.Readlink(p)
		if err != nil {
			return nil, false
		}
		h.Write([]byte("blob " + strconv.Itoa(len(target)) + "\x00" + target))
		return h.Sum(nil), true
	}
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || (st.Mode&0o100 != 0) != (mode == "100755") {
		return nil, false
	}
	h.Write([]byte("blob " + strconv.FormatInt(st.Size, 10) + "\x00"))
	if n, err := io.Copy(h, f); err != nil || n != st.Size {
		return nil, false
	}
	return h.Sum(nil), true
}
