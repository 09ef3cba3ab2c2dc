package codesnap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/isolate"
)

// overlayResult is Result for an overlay copy: the base's index, with the
// upper layer's deletions removed and its files hashed in, is the child's
// tree; added files the tree's ignore rules (and the submitter's excludes)
// cover are left out, as `git add -A` would leave them.
func (co *Checkout) overlayResult(ctx context.Context, store *blobstore.Store) (*Result, error) {
	ch, err := isolate.ReadUpper(co.upper)
	if err != nil {
		return nil, fmt.Errorf("codesnap: read the copy's changes: %w", err)
	}
	index := filepath.Join(co.job, "result.index")
	os.Remove(index)
	if err := linkIndex(co.base, index); err != nil {
		return nil, err
	}
	defer os.Remove(index)
	g := co.overlayGit(index)
	if err := co.indexRemove(ctx, index, append(ch.Del, ch.Opaque...)); err != nil {
		return nil, err
	}
	if len(ch.Set) > 0 {
		g.stdin = []byte(strings.Join(ch.Set, "\x00") + "\x00")
		if _, err := g.run(ctx, "update-index", "--add", "--remove", "--replace", "-z", "--stdin"); err != nil {
			return nil, fmt.Errorf("codesnap: read the copy's changes: %w", err)
		}
		g.stdin = nil
	}
	tree, err := g.line(ctx, "write-tree")
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	if tree == co.snap.Tree {
		return &Result{Tree: co.snap.Tree}, nil
	}
	added, err := co.added(ctx, index, tree)
	if err != nil {
		return nil, err
	}
	ignored, err := co.ignoredOf(ctx, index, added)
	if err != nil {
		return nil, err
	}
	if len(ignored) > 0 {
		if err := co.indexRemove(ctx, index, ignored); err != nil {
			return nil, err
		}
		if tree, err = g.line(ctx, "write-tree"); err != nil {
			return nil, fmt.Errorf("codesnap: %w", err)
		}
	}
	return co.patchOf(ctx, store, g, tree)
}

// indexRemove takes paths (and everything beneath them) out of index.
func (co *Checkout) indexRemove(ctx context.Context, index string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	g := co.overlayGit(index)
	g.stdin = []byte(strings.Join(paths, "\x00") + "\x00")
	if _, err := g.run(ctx, "rm", "-r", "-f", "-q", "--cached", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
		return fmt.Errorf("codesnap: read the copy's deletions: %w", err)
	}
	return nil
}

// added lists the paths tree has that the snapshot has not.
func (co *Checkout) added(ctx context.Context, index, tree string) ([]string, error) {
	out, err := co.overlayGit(index).run(ctx, "diff-tree", "-r", "-z", "--no-renames", "--diff-filter=A", "--name-only", co.snap.Tree, tree)
	if err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	var added []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			added = append(added, p)
		}
	}
	return added, nil
}

// ignoredOf are the added paths that the child's tree's .gitignore files
// (those on their way from the top only: the rest cannot match) or the
// submitter's excludes ignore. The .gitignore files are checked out from
// index into a scratch directory, so the child's view is never read.
func (co *Checkout) ignoredOf(ctx context.Context, index string, added []string) ([]string, error) {
	if len(added) == 0 {
		return nil, nil
	}
	want := map[string]bool{}
	for _, p := range added {
		for d := path.Dir(p); ; d = path.Dir(d) {
			want[path.Join(d, ".gitignore")] = true
			if d == "." {
				break
			}
		}
	}
	scratch := filepath.Join(co.job, "ignore")
	os.RemoveAll(scratch)
	if err := os.Mkdir(scratch, 0o700); err != nil {
		return nil, fmt.Errorf("codesnap: %w", err)
	}
	defer os.RemoveAll(scratch)
	g := workerGit(scratch, "GIT_DIR="+co.meta, "GIT_WORK_TREE="+scratch, "GIT_INDEX_FILE="+index)
	check := workerGit(scratch, append(append([]string{}, g.env...), "GIT_LITERAL_PATHSPECS=0")...)
	var list []string
	for p := range want {
		list = append(list, p)
	}
	g.stdin = []byte(strings.Join(list, "\x00") + "\x00")
	// Paths the index lacks are skipped (with a warning on stderr).
	g.run(ctx, "checkout-index", "-f", "-q", "-z", "--stdin")
	check.stdin = []byte(strings.Join(added, "\x00") + "\x00")
	out, err := check.run(ctx, "-c", "core.excludesFile=/dev/null", "check-ignore", "--no-index", "-z", "--stdin")
	var ge *gitError
	if err != nil && !(errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) == "") {
		return nil, fmt.Errorf("codesnap: %w", err) // exit 1 with no message: nothing ignored
	}
	var ignored []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			ignored = append(ignored, p)
		}
	}
	return ignored, nil
}
