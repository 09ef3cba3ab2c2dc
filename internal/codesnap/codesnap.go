// Package codesnap moves code between the submitter and the workers of a
// fleet: the submitter records the code a run starts from, a worker
// materialises it in a copy of its own, and the child's changes come back as
// one patch the submitter applies whole or not at all.
//
//  1. Capture (submitter): the base commit (HEAD; none in a repository with
//     no commits; a detached HEAD is fine) and the dirty state on top of it
//     as one binary git patch — modified, added, deleted and untracked
//     files, modes and symlinks, never gitignored files — put in the store
//     as one git pack of the objects the base lacks (pack.go); after a
//     capture on the same base, as a pack of what that one's tree lacks
//     too, naming the earlier packs as its chain (packchain.go).
//     Commits the remote may not have (HEAD not reachable from a
//     remote-tracking branch, or no remote at all) go along as a git
//     bundle. The Snapshot names the tree object of base + patch: what the
//     child must see, checked on the worker.
//  2. Materialise (worker): a cached bare clone per repository (keyed by the
//     remote URL, or the root commit when there is no remote), fetched from
//     the remote (a base from a bundle, and the dirty state, go into git
//     dirs of their own that borrow the clone: dirtyhome.go); then, per
//     call, a new repository whose objects borrow the cache's (alternates), with
//     HEAD at the base, the base in its index and the dirty state in its
//     work tree: the child sees what `git status` showed the submitter.
//     The cache is shared by concurrent workers on a host under a file lock;
//     the child's copy cannot write into it.
//  3. Result (worker): the copy's tree against the snapshot tree, computed
//     with a git dir and index outside the child's reach (nothing the child
//     wrote in its .git is read), as a binary patch in the store.
//  4. Apply (submitter): isolate.ApplyPatch, the local isolated child's
//     apply-back: plain `git apply`, else a clean three-way merge of every
//     file against the snapshot, else nothing — with the reason and whether
//     the submitter's HEAD moved since Capture.
//
// A Snapshot and a Result are JSON and small (refs into the store), so they
// travel in Temporal's history as they are.
package codesnap

import (
	"bytes"
	"context"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/gitx"
)

// Snapshot is the submitter's code as a worker needs it.
type Snapshot struct {
	// Repo identifies the repository for a worker's cache: the remote's
	// URL, normalised, or "root:<commit>" without a remote; empty for a
	// repository with no commits.
	Repo string `json:"repo,omitempty"`
	// Remote is where a worker fetches the base from (credentials removed).
	Remote string `json:"remote,omitempty"`
	// Base is the commit the dirty state sits on; empty when the
	// repository has no commits.
	Base string `json:"base,omitempty"`
	// Branch is the submitter's branch (empty: detached HEAD); the copy is
	// on a branch of that name.
	Branch string `json:"branch,omitempty"`
	// Tree is the tree object of base + dirty state: the child's start.
	Tree string `json:"tree"`
	// ObjectFormat is the repository's hash (sha1 or sha256).
	ObjectFormat string `json:"object_format"`
	// Pack is the dirty state as one git pack (pack.go): the objects of
	// DirtyTree that Base lacks, blobs and trees (nil: clean, or Patch);
	// with a PackChain, only those that neither Base nor the chain's last
	// tree has.
	Pack *blobstore.Ref `json:"pack,omitempty"`
	// PackChain are the packs of the submitter's earlier submissions on
	// the same base that Pack completes (packchain.go), oldest first,
	// each with the tree it completes: the first holds what its tree has
	// that Base lacks, each later one what its tree has that Base and the
	// tree before lack. A worker indexes the links its clone lacks, then
	// Pack. Empty: Pack holds all of DirtyTree that Base lacks (and in
	// snapshots from before chains). At most maxPackChain-1 links.
	PackChain []PackLink `json:"pack_chain,omitempty"`
	// DirtyTree is the tree of base + dirty state the pack holds: Tree
	// before any layer. Set with Pack.
	DirtyTree string `json:"dirty_tree,omitempty"`
	// Patch is the dirty state as a binary patch against Base (nil: clean
	// or Pack). Capture writes a pack; a patch remains where the chain
	// rebases a run's tree at maxLayers, and in older snapshots.
	Patch *blobstore.Ref `json:"patch,omitempty"`
	// Layers are a run's later changes, each a patch against the tree
	// before it, applied after Patch (layers.go): Tree is the tree after
	// the last. The dirty state is stored once however many there are.
	Layers []*blobstore.Ref `json:"layers,omitempty"`
	// Bundle holds commits up to Base that the remote may lack (nil: none).
	Bundle *blobstore.Ref `json:"bundle,omitempty"`
	// Subdir is where in the repository the submitter stood ("" = top).
	Subdir string `json:"subdir,omitempty"`
	// Excludes are the submitter's ignore rules outside the tree
	// (.git/info/exclude, core.excludesFile), so the worker leaves out of
	// the result what the submitter would never see as a change.
	Excludes string `json:"excludes,omitempty"`
}

// PackLink is one earlier pack of a Snapshot's PackChain.
type PackLink struct {
	// Pack is the pack in the store.
	Pack *blobstore.Ref `json:"pack"`
	// Tree is the tree object the pack completes (a dirty tree the
	// submitter shipped before).
	Tree string `json:"tree"`
}

// Result is a child's change: a patch against the snapshot's tree.
type Result struct {
	// Tree is the snapshot tree the patch applies to.
	Tree string `json:"tree"`
	// Patch is the change (nil: the child changed nothing).
	Patch *blobstore.Ref `json:"patch,omitempty"`
	// Files are the repository-relative paths it touches.
	Files []string `json:"files,omitempty"`
}

// diffFlags make a patch git apply reads back exactly, whatever the
// user's diff configuration.
var diffFlags = []string{"--binary", "--full-index", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/"}

// gitError is a failed git command in git's own words.
type gitError = gitx.Error

// gitCmd is one git invocation, through gitx: no program a repository
// configures (hooks, fsmonitor, filters, drivers, ssh, credential
// helpers) runs in brood's git calls on copies and caches.
type gitCmd struct {
	dir   string
	env   []string
	stdin []byte
	// noUserConfig drops the user's and the system's git configuration
	// (gitx.Cmd.NoUserConfig): a worker's git on submitted content.
	noUserConfig bool
}

// workerGit is a gitCmd for a worker's git on what a submission or a
// child brought (a copy, its checkout, its result, the cache's trees): no
// system or global configuration, so a filter, textconv or merge driver
// the worker's user installed (git-lfs, git-crypt, nbstripout) never runs
// on hostile content, and no core.autocrlf or core.checkStat there
// changes what is hashed or checked out (red team 4, P3-2). A fetch
// from the worker's own remotes (ensureBase) keeps the user's: its
// proxies, CA and URL rewrites are for those servers, and a fetch runs
// no filter.
func workerGit(dir string, env ...string) gitCmd {
	return gitCmd{dir: dir, env: env, noUserConfig: true}
}

// run runs git and returns its stdout.
func (g gitCmd) run(ctx context.Context, args ...string) (string, error) {
	c := gitx.Cmd{Dir: g.dir, Env: g.env, NoUserConfig: g.noUserConfig}
	if g.stdin != nil {
		c.Stdin = bytes.NewReader(g.stdin)
	}
	return c.Run(ctx, args...)
}

// line runs git and returns its first line of output, trimmed.
func (g gitCmd) line(ctx context.Context, args ...string) (string, error) {
	out, err := g.run(ctx, args...)
	out, _, _ = strings.Cut(out, "\n")
	return strings.TrimSpace(out), err
}
