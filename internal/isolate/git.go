package isolate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// errNotRepo means the directory is not inside a git work tree.
var errNotRepo = errors.New("not a git repository")

// GitError is a failed git command with what it printed, so a conflict or
// a broken repository can be reported in git's own words.
type GitError struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// repo is one git work tree as seen from the parent.
type repo struct {
	top    string // work tree root, symlinks resolved
	gitDir string // this work tree's git dir (holds its index)
	common string // the common git dir (objects, worktrees, our lock)
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

// gitEnv is the environment of every git call: the caller's, minus
// variables that would point git at another index or work tree, plus
// literal pathspecs (a file named `*.go` is a file, not a glob) and no
// optional locks (a read must never take the index lock from the user).
func gitEnv(extra []string) []string {
	env := make([]string, 0, len(os.Environ())+len(extra)+2)
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_INDEX_FILE=") || strings.HasPrefix(kv, "GIT_WORK_TREE=") || strings.HasPrefix(kv, "GIT_DIR=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GIT_LITERAL_PATHSPECS=1", "GIT_OPTIONAL_LOCKS=0")
	return append(env, extra...)
}

func (r *repo) git(ctx context.Context, env []string, args ...string) (string, error) {
	return r.gitIn(ctx, r.top, env, nil, args...)
}

// gitIn runs git in dir with extra environment and optional stdin and
// returns its stdout.
func (r *repo) gitIn(ctx context.Context, dir string, env []string, stdin []byte, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(env)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &GitError{Args: args, Stderr: stderr.String(), Err: err}
	}
	return stdout.String(), nil
}

// applyLock serialises apply-back per repository, across processes (nested
// brood children apply into the same tree), with flock on a file in the
// common git dir. Snapshots take it shared, so they never see half of an
// apply; apply-back takes it exclusive.
func (r *repo) lock(ctx context.Context, exclusive bool) (func(), error) {
	f, err := os.OpenFile(filepath.Join(r.common, "brood-apply.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("isolate: open apply lock: %w", err)
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
			return nil, fmt.Errorf("isolate: apply lock: %w", err)
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
	done chan struct{}
	tree string
	err  error
}

func (s *snapshot) wait() (string, error) {
	<-s.done
	return s.tree, s.err
}

// startSnapshot writes the current work tree, dirty and untracked files
// included and ignored ones left out, as a tree object. It runs `git add
// -A` on a private index that starts as a link to the last snapshot's index
// (or of the repository's own), so git re-hashes only files whose stat data
// changed and the untracked cache skips unchanged directories: the cost is
// a stat per file, never a re-hash of the repository. The user's index is
// only ever read.
func (i *Isolator) startSnapshot(ctx context.Context, r *repo, index string) *snapshot {
	s := &snapshot{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.tree, s.err = takeSnapshot(ctx, r, index, true)
	}()
	return s
}

// takeSnapshot writes the tree; strict also drops files the cached index
// picked up before they were ignored (two index-wide git listings: the
// spawn snapshot needs it, base-moved detection does not).
func takeSnapshot(ctx context.Context, r *repo, index string, strict bool) (string, error) {
	unlock, err := r.lock(ctx, false)
	if err != nil {
		return "", err
	}
	defer unlock()
	// git never rewrites an index in place (it writes index.lock and
	// renames it), so a hard link is a free, safe copy of the cached index.
	cache := filepath.Join(r.gitDir, "brood-snapshot.index")
	if err := os.Link(cache, index); errors.Is(err, os.ErrNotExist) {
		err = copyFile(filepath.Join(r.gitDir, "index"), index)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	} else if err != nil {
		if err := copyFile(cache, index); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	env := []string{"GIT_INDEX_FILE=" + index}
	if _, err := r.git(ctx, env, "-c", "core.untrackedCache=true", "-c", "core.fsmonitor=false", "add", "-A"); err != nil {
		return "", fmt.Errorf("isolate: snapshot: %w", err)
	}
	if strict {
		if err := dropNewlyIgnored(ctx, r, env); err != nil {
			return "", err
		}
	}
	tree, err := r.git(ctx, env, "write-tree")
	if err != nil {
		return "", fmt.Errorf("isolate: snapshot: %w", err)
	}
	// This index, fresh stat data and untracked cache included, is the
	// next snapshot's starting point; rename is atomic, so a concurrent
	// snapshot links either the old or the new one.
	if err := os.Rename(index, cache); err != nil {
		os.Remove(index)
	}
	return strings.TrimSpace(tree), nil
}

// dropNewlyIgnored removes from the private index the files an earlier
// snapshot picked up while they were untracked and that are ignored now (a
// .env the user has since put in .gitignore): the cached index must never
// carry an ignored file into a child's copy. Ignored files the real index
// tracks stay, as git keeps them.
func dropNewlyIgnored(ctx context.Context, r *repo, env []string) error {
	ign, err := r.git(ctx, env, "ls-files", "-z", "-ci", "--exclude-standard")
	if err != nil || ign == "" {
		return nil
	}
	tracked, _ := r.git(ctx, nil, "ls-files", "-z", "-ci", "--exclude-standard")
	keep := map[string]bool{}
	for _, p := range strings.Split(tracked, "\x00") {
		keep[p] = true
	}
	var drop []string
	for _, p := range strings.Split(ign, "\x00") {
		if p != "" && !keep[p] {
			drop = append(drop, p)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	if _, err := r.gitIn(ctx, r.top, env, []byte(strings.Join(drop, "\x00")), "rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
		return fmt.Errorf("isolate: snapshot: %w", err)
	}
	return nil
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
