package codesnap

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
)

// Capture records the code in the repository containing dir and puts what a
// worker needs in store: the dirty patch, and a bundle of the commits the
// remote may lack. The user's index and refs are only read.
//
// (The dirty state is a pack of the objects the base lacks, pack.go, or
// of those the base and the dirty tree shipped last lack: packchain.go.)
func Capture(ctx context.Context, store *blobstore.Store, dir string) (*Snapshot, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	out, err := gitCmd{dir: real}.run(ctx, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", "--show-object-format")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 4 || lines[0] == "" {
		return nil, fmt.Errorf("codesnap: %s is not in a git work tree: running on workers ships code as git commits and patches (git init it, or use the local engine)", dir)
	}
	top, gitDir, common, format := lines[0], lines[1], lines[2], lines[3]
	if !filepath.IsAbs(common) {
		common = filepath.Join(real, common)
	}
	g := gitCmd{dir: top}
	snap := &Snapshot{ObjectFormat: format}
	if rel, err := filepath.Rel(top, real); err == nil && rel != "." {
		snap.Subdir = filepath.ToSlash(rel)
	}
	snap.Base, _ = g.line(ctx, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	snap.Branch, _ = g.line(ctx, "symbolic-ref", "-q", "--short", "HEAD")
	if snap.Tree, err = worktreeTree(ctx, top, gitDir, common, format, snap.Base); err != nil {
		return nil, err
	}
	if snap.Pack, snap.PackChain, err = dirtyPacks(ctx, store, g, common, top, snap.Base, snap.Tree); err != nil {
		return nil, err
	}
	if snap.Pack != nil {
		snap.DirtyTree = snap.Tree
	}
	if snap.Excludes, err = excludes(ctx, g, common); err != nil {
		return nil, err
	}
	if snap.Base == "" {
		return snap, nil // nothing to fetch: the patch is the whole tree
	}
	remote := pickRemote(ctx, g, snap.Branch)
	if remote != "" {
		raw, _ := g.line(ctx, "remote", "get-url", remote)
		snap.Remote = cleanURL(raw, top)
	}
	if snap.Remote != "" {
		snap.Repo = repoID(snap.Remote)
	} else {
		roots, err := g.run(ctx, "rev-list", "--max-parents=0", snap.Base)
		if err != nil {
			return nil, fmt.Errorf("codesnap: %w", err)
		}
		first := strings.Fields(roots)
		if len(first) == 0 {
			return nil, fmt.Errorf("codesnap: no root commit below %s", snap.Base)
		}
		snap.Repo = "root:" + first[len(first)-1]
	}
	if snap.Bundle, err = bundle(ctx, store, g, snap.Base, remote, snap.Remote != ""); err != nil {
		return nil, err
	}
	return snap, nil
}

// worktreeTree writes the work tree as the user sees it — tracked files as
// they are on disk, untracked files added, ignored ones left out — as a tree
// object, through a private copy of the index, from the capture index
// where that holds (captureindex.go); brood's run records as the base
// commit has them (capturerecords.go).
func worktreeTree(ctx context.Context, top, gitDir, common, format, base string) (string, error) {
	tmp, err := os.MkdirTemp("", "brood-capture-")
	if err != nil {
		return "", fmt.Errorf("codesnap: %w", err)
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	if err := privateIndex(filepath.Join(gitDir, "index"), index); err != nil {
		return "", err
	}
	g := gitCmd{dir: top, env: []string{"GIT_INDEX_FILE=" + index}}
	home, kept := capturePath(common, top)
	key, user := "", map[string]string(nil)
	if kept != "" {
		key, user = startFromCapture(ctx, g, top, common, index, home, kept, format)
	}
	// core.bigFileThreshold=1 streams every new blob into one pack (git's
	// bulk checkin) instead of one loose object file each, where that pays
	// (checkin.go: many new files, not a tree captured before; stored
	// uncompressed where they do not compress). The user's
	// repository gets a pack where it got loose objects (git gc folds
	// small packs together as it does loose objects).
	// --ignore-errors: a repository nested in the tree with no commit yet
	// (git init, nothing committed) has nothing git can record, and is
	// left out, as the local isolated writer leaves it out; any other
	// error still fails (addErrors).
	args := append(checkinArgs(ctx, g, top), "-c", "core.fsmonitor=false", "add", "-A", "--ignore-errors", "--", ".")
	args = append(args, recordExcludes()...)
	add := g
	// (addErrors reads git's words; the excludes are pathspec magic)
	add.env = append(append([]string(nil), g.env...), "LC_ALL=C", "GIT_LITERAL_PATHSPECS=0")
	add.env = append(add.env, addHeap()...)
	if _, err := add.run(ctx, args...); err != nil {
		if err := addErrors(err); err != nil {
			return "", fmt.Errorf("codesnap: snapshot the work tree: %w", err)
		}
	}
	if err := baseRecords(ctx, g, index, format, base); err != nil {
		return "", err
	}
	tree, err := g.line(ctx, "write-tree")
	if err != nil {
		return "", fmt.Errorf("codesnap: snapshot the work tree: %w", err)
	}
	if key != "" {
		keepCapture(home, kept, top, key, index, gitDir, user, format)
	}
	return tree, nil
}

// addHeap is the environment that keeps glibc's malloc from giving back
// to the kernel, in capture's git add, the heap it frees: bulk checkin
// allocates and frees zlib's state (some 256 KiB) for every blob, and
// with the default trim threshold each free at the heap's top was
// returned (brk) and the next blob faulted those pages in again, zeroed.
// Issue 26's new dirty state (11,000 files) took 19,500 brk calls from
// the user's index and 44,000 from the capture index's start (which
// adds 10,000 entries and changes the order of allocations): 0.5 and
// 0.95 s of system time, 0.3 s with the threshold at 256 MiB (git add
// is short-lived: the memory it holds at its peak is what it held
// anyway). A threshold the user set (GLIBC_TUNABLES naming it,
// MALLOC_TRIM_THRESHOLD_) stands; other C libraries ignore the
// variable.
func addHeap() []string {
	const trim = "glibc.malloc.trim_threshold=268435456"
	cur := os.Getenv("GLIBC_TUNABLES")
	switch {
	case strings.Contains(cur, "glibc.malloc.trim_threshold"), os.Getenv("MALLOC_TRIM_THRESHOLD_") != "":
		return nil
	case cur != "":
		return []string{"GLIBC_TUNABLES=" + cur + ":" + trim}
	}
	return []string{"GLIBC_TUNABLES=" + trim}
}

// addErrors is err, a failed `git add --ignore-errors`, unless every
// error git reported is a nested repository with no commit checked out
// (nil: the rest of the tree was added).
func addErrors(err error) error {
	var ge *gitError
	if !errors.As(err, &ge) {
		return err
	}
	seen := false
	for l := range strings.Lines(ge.Stderr) {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "error: '") && strings.HasSuffix(l, "' does not have a commit checked out"):
			seen = true
		case strings.HasPrefix(l, "error:"), strings.HasPrefix(l, "fatal:"):
			return err
		}
	}
	if !seen {
		return err
	}
	return nil
}

// privateIndex makes index a copy of the user's index that git reads as
// it reads the original: with its modification time, by which git tells a
// file written in the same second as the index ("racily clean") from a
// clean one. A copy with a new time would pass such a file, changed but of
// the same size, as unchanged: the snapshot would miss the edit. A hard
// link is the copy where it can be (git never rewrites an index in place:
// it writes index.lock and renames it).
func privateIndex(src, index string) error {
	if err := os.Link(src, index); err == nil || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	info, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("codesnap: read the index: %w", err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("codesnap: read the index: %w", err)
	}
	if err := os.WriteFile(index, data, 0o600); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	if err := os.Chtimes(index, info.ModTime(), info.ModTime()); err != nil {
		return fmt.Errorf("codesnap: %w", err)
	}
	return nil
}

func emptyTree(ctx context.Context, g gitCmd) (string, error) {
	g.stdin = []byte{}
	t, err := g.line(ctx, "hash-object", "-t", "tree", "--stdin")
	if err != nil {
		return "", fmt.Errorf("codesnap: %w", err)
	}
	return t, nil
}

// pickRemote is the branch's upstream remote, else origin, else the only
// remote; "" when there is none to choose.
func pickRemote(ctx context.Context, g gitCmd, branch string) string {
	if branch != "" {
		if r, _ := g.line(ctx, "config", "--get", "branch."+branch+".remote"); r != "" && r != "." {
			return r
		}
	}
	out, _ := g.run(ctx, "remote")
	names := strings.Fields(out)
	for _, n := range names {
		if n == "origin" {
			return n
		}
	}
	if len(names) == 1 {
		return names[0]
	}
	return ""
}

// cleanURL drops credentials from a remote URL (they must never reach
// Temporal's history; workers have their own) and makes a relative local
// path absolute. A URL git would treat as a command or an option is
// dropped.
func cleanURL(raw, top string) string {
	switch {
	case raw == "", strings.HasPrefix(raw, "-"), strings.HasPrefix(raw, "ext::"), strings.Contains(raw, "::"):
		return ""
	}
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		switch u.Scheme {
		case "ssh", "git+ssh", "ssh+git":
			if u.User != nil {
				u.User = url.User(u.User.Username())
			}
		default:
			u.User = nil
		}
		return u.String()
	}
	if i := strings.Index(raw, ":"); i > 0 && !strings.Contains(raw[:i], "/") {
		return raw // scp-like user@host:path
	}
	if !filepath.IsAbs(raw) {
		raw = filepath.Join(top, raw)
	}
	return filepath.Clean(raw)
}

// repoID names a repository by its remote, the same for every spelling of
// it: scheme and user dropped, host lowercased, .git and slashes trimmed.
func repoID(remote string) string {
	s := remote
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		if u.Scheme == "file" {
			return "path:" + filepath.Clean(u.Path)
		}
		s = strings.ToLower(u.Hostname()) + "/" + strings.TrimPrefix(u.Path, "/")
	} else if i := strings.Index(s, ":"); i > 0 && !strings.Contains(s[:i], "/") {
		host := s[:i]
		if at := strings.LastIndex(host, "@"); at >= 0 {
			host = host[at+1:]
		}
		s = strings.ToLower(host) + "/" + strings.TrimPrefix(s[i+1:], "/")
	} else {
		return "path:" + filepath.Clean(s)
	}
	return strings.TrimSuffix(strings.TrimSuffix(s, "/"), ".git")
}

// bundle stores the commits up to base that the remote may lack: none when
// a remote-tracking branch already contains base, the commits not on any
// remote-tracking branch otherwise, the whole history without a remote.
func bundle(ctx context.Context, store *blobstore.Store, g gitCmd, base, remote string, hasRemote bool) (*blobstore.Ref, error) {
	var negs []string
	if hasRemote {
		out, _ := g.run(ctx, "for-each-ref", "--format=%(objectname)", "refs/remotes/"+remote+"/")
		for _, r := range strings.Fields(out) {
			if _, err := g.run(ctx, "merge-base", "--is-ancestor", base, r); err == nil {
				return nil, nil
			}
			negs = append(negs, "^"+r)
		}
	}
	tmp, err := os.MkdirTemp("", "brood-bundle-")
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "base.bundle")
	// The bundle's one ref is HEAD; its tip is checked against base on the
	// worker, so a HEAD that moved meanwhile is caught.
	g.stdin = []byte(strings.Join(append([]string{"HEAD"}, negs...), "\n") + "\n")
	if _, err := g.run(ctx, "bundle", "create", "-q", file, "--stdin"); err != nil {
		return nil, fmt.Errorf("codesnap: bundle the unpushed commits: %w", err)
	}
	ref, err := store.PutFile(ctx, file)
	if err != nil {
		return nil, fmt.Errorf("codesnap: store the bundle: %w", err)
	}
	return &ref, nil
}

// excludes reads the ignore rules that live outside the tree.
func excludes(ctx context.Context, g gitCmd, common string) (string, error) {
	var b strings.Builder
	files := []string{filepath.Join(common, "info", "exclude")}
	if p, _ := g.line(ctx, "config", "--path", "--get", "core.excludesFile"); p != "" {
		files = append(files, p)
	} else if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		files = append(files, filepath.Join(x, "git", "ignore"))
	} else if h, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(h, ".config", "git", "ignore"))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if b.Len()+len(data) > 1<<20 {
			return "", fmt.Errorf("codesnap: %s: over 1 MiB of ignore rules", f)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String(), nil
}
