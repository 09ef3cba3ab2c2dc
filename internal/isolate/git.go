package isolate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/tool"
)

// errNotRepo means the directory is not inside a git work tree.
var errNotRepo = errors.New("not a git repository")

// GitError is a failed git command with what it printed, so a conflict or
// a broken repository can be reported in git's own words.
type GitError = gitx.Error

// repo is one git work tree as seen from the parent.
type repo struct {
	top    string // work tree root, symlinks resolved
	gitDir string // this work tree's git dir (holds its index)
	common string // the common git dir (objects, worktrees, our lock)

	// filters are the user's filter drivers the HEAD commit's
	// .gitattributes name (userFilters), read once: the only filters
	// brood's git on the tree runs (gitIn).
	filtersOnce sync.Once
	filters     []string
	sha256      bool // the repository's objects are named by SHA-256 (read with filters)
}

// openRepo finds the repository containing dir with one git call.
func openRepo(ctx context.Context, dir string) (*repo, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	r := &repo{top: real}
	out, err := r.gitIn(ctx, real, nil, nil, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && (strings.Contains(ge.Stderr, "not a git repository") || strings.Contains(ge.Stderr, "must be run in a work tree")) {
			return nil, errNotRepo
		}
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || lines[0] == "" {
		return nil, errNotRepo // e.g. inside .git or a bare repository
	}
	r.top, r.gitDir, r.common = lines[0], lines[1], lines[2]
	if !filepath.IsAbs(r.common) {
		r.common = filepath.Join(real, r.common)
	}
	return r, nil
}

func (r *repo) git(ctx context.Context, env []string, args ...string) (string, error) {
	return r.gitIn(ctx, r.top, env, nil, args...)
}

// gitIn runs git in dir with extra environment and optional stdin and
// returns its stdout, through gitx: no program the repository (or the
// child, in its copy) configured runs, and pathspecs are literal. Of the
// filters, only the user's own (or the system's) that the HEAD commit's
// .gitattributes name run (keptFilters): the tree's and a copy's
// .gitattributes are a writer's to change, and a filter is a program run
// unconfined on what it wrote; brood's hashes only need to agree with
// each other and with the user's index.
func (r *repo) gitIn(ctx context.Context, dir string, env []string, stdin []byte, args ...string) (string, error) {
	c := gitx.Cmd{Dir: dir, Env: env}
	if gitx.MayRunDrivers(args) {
		c.NoFilters, c.KeepFilters = true, r.keptFilters(ctx)
	}
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	return c.Run(ctx, args...)
}

// keptFilters is userFilters, read once.
func (r *repo) keptFilters(ctx context.Context) []string {
	r.filtersOnce.Do(func() { r.filters = r.userFilters(ctx) })
	return r.filters
}

// userFilters are the filter drivers defined in the user's or the
// system's configuration that a .gitattributes of the repository's HEAD
// commit names (filter=<name>): what a child writes cannot add to them.
// Without such a driver it costs one git config; with one, a walk of
// HEAD's tree that lists only its .gitattributes (attrsIn), and one
// cat-file of them.
func (r *repo) userFilters(ctx context.Context) []string {
	plain := gitx.Cmd{Dir: r.top}
	out, err := plain.Run(ctx, "config", "--show-scope", "--null", "--get-regexp", `^(filter\.|extensions\.objectformat$)`)
	if err != nil {
		return nil
	}
	var defined []string
	recs := strings.Split(out, "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		key, val, _ := strings.Cut(recs[i+1], "\n")
		if strings.EqualFold(key, "extensions.objectformat") {
			r.sha256 = strings.EqualFold(strings.TrimSpace(val), "sha256")
			continue
		}
		if s := recs[i]; s != "local" && s != "worktree" {
			if name := strings.TrimPrefix(key[:max(strings.LastIndexByte(key, '.'), 0)], "filter."); !slices.Contains(defined, name) {
				defined = append(defined, name)
			}
		}
	}
	if len(defined) == 0 {
		return nil
	}
	attrs, err := r.attrsIn(ctx, "HEAD")
	if err != nil || len(attrs) == 0 {
		return nil
	}
	var objs []string
	for _, a := range attrs {
		objs = append(objs, a.id)
	}
	plain.Stdin = strings.NewReader(strings.Join(objs, "\n") + "\n")
	text, err := plain.Run(ctx, "cat-file", "--batch")
	if err != nil {
		return nil
	}
	var named []string
	for _, tok := range strings.Fields(text) {
		if name, ok := strings.CutPrefix(tok, "filter="); ok && slices.Contains(defined, name) && !slices.Contains(named, name) {
			named = append(named, name)
		}
	}
	return named
}

// attrEntry is one .gitattributes file of a tree.
type attrEntry struct{ mode, id, path string }

// attrsIn lists the .gitattributes files of treeish (a commit or a tree)
// as a diff from the empty tree limited to them: git walks the tree but
// prints only those, where ls-tree -r would print every path of it.
func (r *repo) attrsIn(ctx context.Context, treeish string) ([]attrEntry, error) {
	empty := "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	if r.sha256 {
		empty = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
	}
	c := gitx.Cmd{Dir: r.top, Env: []string{"GIT_LITERAL_PATHSPECS=0"}}
	out, err := c.Run(ctx, "diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-ext-diff", empty, treeish, "--", ":(glob)**/.gitattributes")
	if err != nil {
		return nil, err
	}
	var attrs []attrEntry
	recs := strings.Split(out, "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		// :000000 100644 0000... <id> A
		if fs := strings.Fields(recs[i]); len(fs) == 5 && fs[4] == "A" && fs[1] != "120000" && fs[1] != "160000" {
			attrs = append(attrs, attrEntry{mode: fs[1], id: fs[3], path: recs[i+1]})
		}
	}
	return attrs, nil
}

// attrsInfo is attrs as update-index --index-info -z input, less the
// paths in skip.
func attrsInfo(attrs []attrEntry, skip func(string) bool) []byte {
	var b bytes.Buffer
	for _, a := range attrs {
		if skip == nil || !skip(a.path) {
			fmt.Fprintf(&b, "%s %s\t%s\x00", a.mode, a.id, a.path)
		}
	}
	return b.Bytes()
}

// lock is the apply lock: it serialises apply-back per repository, across
// processes (nested brood children apply into the same tree), with flock on
// a file in the common git dir. Snapshots take it shared, so they never see
// half of an apply; apply-back takes it exclusive.
func (r *repo) lock(ctx context.Context, exclusive bool) (func(), error) {
	return r.flock(ctx, "brood-apply.lock", exclusive)
}

// worktreeLock serialises `git worktree add`, `remove` and `prune` per
// repository, across processes. git does not: a `worktree add` lists the
// other worktrees and fails on one another `add` has created but not yet
// filled in ("failed to read .git/worktrees/X/commondir"), so writers
// dispatched together would fail to start.
func (r *repo) worktreeLock(ctx context.Context) (func(), error) {
	return r.flock(ctx, "brood-worktree.lock", true)
}

// worktree runs `git worktree args...` under the worktree lock.
func (r *repo) worktree(ctx context.Context, args ...string) (string, error) {
	unlock, err := r.worktreeLock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	return r.git(ctx, nil, append([]string{"-c", "checkout.workers=0", "worktree"}, args...)...)
}

// flock takes a lock on the named file in the common git dir.
func (r *repo) flock(ctx context.Context, name string, exclusive bool) (func(), error) {
	f, err := os.OpenFile(filepath.Join(r.common, name), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("isolate: open %s: %w", name, err)
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	// flock blocks without a context; a waiting goroutine releases the
	// caller on cancellation and drops the lock if it arrives late.
	done := make(chan error, 1)
	go func() { done <- unix.Flock(int(f.Fd()), how) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("isolate: %s: %w", name, err)
		}
		return func() { f.Close() }, nil
	case <-ctx.Done():
		go func() { <-done; f.Close() }()
		return nil, ctx.Err()
	}
}

// snapshot is the tree of the parent's work tree at spawn time, computed in
// the background.
type snapshot struct {
	done  chan struct{}
	tree  string
	print *treePrint // what the tree was made of (set before done)
	err   error
}

func (s *snapshot) wait() (string, error) {
	<-s.done
	return s.tree, s.err
}

// startSnapshot writes the current work tree, dirty and untracked files
// included and ignored ones left out, as a tree object. One git status
// walks the tree (synchronously: its list of ignored entries is what an
// overlay hides before the child mounts it); the tree is then written in
// the background from a private copy of the repository's index with only
// the paths status reported brought up to date, so the cost beyond that
// one walk follows the dirty and untracked files, never the repository's
// size. The user's index is only ever read. The shared apply lock is held
// from the walk to the written tree, so a snapshot never sees half of an
// apply.
func (i *Isolator) startSnapshot(ctx context.Context, r *repo, index string) (*snapshot, treeStatus, error) {
	unlock, err := r.lock(ctx, false)
	if err != nil {
		return nil, treeStatus{}, err
	}
	st, err := readStatus(ctx, r)
	if err != nil {
		unlock()
		return nil, treeStatus{}, err
	}
	s := &snapshot{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer unlock()
		// Stamped before the files are read: a change after the stamp
		// shows at finish, so the print never hides a move.
		s.print = printTree(r, st, nil)
		s.tree, s.err = writeTree(ctx, r, index, st.changed)
	}()
	return s, st, nil
}

// takeSnapshot is startSnapshot in one step; also names more paths to
// bring up to date (those that were dirty at an earlier snapshot: a file
// the user has since reverted must be read again, not taken from the
// index as it was then).
func takeSnapshot(ctx context.Context, r *repo, index string, also []string) (string, error) {
	tree, _, err := takeSnapshotUnless(ctx, r, index, also, nil)
	return tree, err
}

// takeSnapshotUnless is takeSnapshot that writes no tree when the walk and
// the stamps show the same tree as the earlier print (same is then true).
func takeSnapshotUnless(ctx context.Context, r *repo, index string, also []string, earlier *treePrint) (tree string, same bool, err error) {
	unlock, err := r.lock(ctx, false)
	if err != nil {
		return "", false, err
	}
	defer unlock()
	st, err := readStatus(ctx, r)
	if err != nil {
		return "", false, err
	}
	if earlier != nil && earlier.same(printTree(r, st, also)) {
		return "", true, nil
	}
	tree, err = writeTree(ctx, r, index, append(st.changed, also...))
	return tree, false, err
}

// treeStatus is one walk of the parent's tree by git status: the paths
// that differ from the index or HEAD (tracked, deleted and untracked ones)
// and the untracked ignored entries, a wholly ignored directory as one.
type treeStatus struct {
	changed []string
	ignored []string
	records string // statusRecords: what the walk said of the tree
}

func readStatus(ctx context.Context, r *repo) (treeStatus, error) {
	out, err := r.git(ctx, nil, "-c", "core.fsmonitor=false", "status", "--porcelain=v1", "-z",
		"--untracked-files=all", "--ignored=matching", "--no-renames", "--ignore-submodules=dirty")
	if err != nil {
		return treeStatus{}, fmt.Errorf("isolate: snapshot: %w", err)
	}
	var st treeStatus
	recs := strings.Split(out, "\x00")
	st.records = statusRecords(recs)
	for _, rec := range recs {
		if len(rec) < 4 {
			continue
		}
		// An untracked directory shows with a slash only when it is a
		// repository of its own (a gitlink for update-index).
		code, p := rec[:2], strings.TrimSuffix(rec[3:], "/")
		if p == "" || p == ".git" || strings.HasPrefix(p, ".git/") {
			continue
		}
		switch {
		case code == "!!":
			st.ignored = append(st.ignored, p)
		case code == "??" && tool.IsSecretFile(path.Base(p)):
			// A secrets file of the user's (.env, *.pem, ...) that git does
			// not track stays out of the copy as an ignored one does,
			// whatever the repository's own ignore rules say (a committed
			// `!.env` would otherwise override the user's global ignore):
			// a tracked one is the repository's and is copied.
			st.ignored = append(st.ignored, p)
		case code == "??" && strings.HasSuffix(rec, "/") && !hasCommit(ctx, r, p):
			// A repository with no commit yet (git init, nothing
			// committed) has no gitlink to record (update-index: "is a
			// directory"): the snapshot leaves it out, as git add does.
		default:
			st.changed = append(st.changed, p)
		}
	}
	return st, nil
}

// hasCommit: the repository nested at p (relative to the work tree) has
// a commit checked out, which a gitlink can record. Its own git dir only:
// git never looks above it for one.
func hasCommit(ctx context.Context, r *repo, p string) bool {
	dir := filepath.Join(r.top, filepath.FromSlash(p))
	_, err := r.gitIn(ctx, dir, []string{"GIT_DIR=" + filepath.Join(dir, ".git")}, nil, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	return err == nil
}

// writeTree writes the tree of the repository's index with paths brought
// up to date from the work tree (added, re-hashed, or removed when gone),
// through a private index at index that starts as a link to the real one:
// git never rewrites an index in place (it writes index.lock and renames
// it), so the link is a free, safe copy.
func writeTree(ctx context.Context, r *repo, index string, paths []string) (string, error) {
	os.Remove(index)
	if err := os.Link(filepath.Join(r.gitDir, "index"), index); err != nil && !errors.Is(err, os.ErrNotExist) {
		if err := copyFile(filepath.Join(r.gitDir, "index"), index); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	if len(paths) > 0 {
		in := []byte(strings.Join(paths, "\x00") + "\x00")
		if _, err := r.gitIn(ctx, r.top, env, in, "-c", "core.fsmonitor=false", "update-index", "--add", "--remove", "-z", "--stdin"); err != nil {
			return "", fmt.Errorf("isolate: snapshot: %w", err)
		}
	}
	tree, err := r.git(ctx, env, "write-tree")
	if err != nil {
		return "", fmt.Errorf("isolate: snapshot: %w", err)
	}
	return strings.TrimSpace(tree), nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// snapshotIdentity lets commit-tree work on a machine with no git identity
// configured; the commit is internal and never reaches a branch.
func snapshotIdentity() []string {
	return []string{
		"GIT_AUTHOR_NAME=brood", "GIT_AUTHOR_EMAIL=brood@localhost",
		"GIT_COMMITTER_NAME=brood", "GIT_COMMITTER_EMAIL=brood@localhost",
	}
}
