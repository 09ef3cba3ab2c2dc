package isolate

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/broodhq/brood/internal/gitx"
)

// rawEntry is one record of `git diff --raw`: a path and how it changed.
type rawEntry struct {
	path    string
	status  byte // 'M', 'A', 'D', 'T'
	newMode string
	newBlob string // the new version's object id (zeros for a deletion)
}

// mergeClean is the second chance after `git apply` refused the patch:
// when every file in it is a modified regular file whose changes merge
// without conflict into the parent's current version (git merge-file, the
// snapshot blob as base), all merged files are written; otherwise nothing
// is. This rescues the common case of the parent (or an earlier child)
// having edited other lines of the same file, including the overlay case
// where the child copied up a file that already carried such an edit.
// Overlapping edits still conflict. The index is not used.
func (w *Workspace) mergeClean(ctx context.Context, base string, entries []rawEntry, childFile func(string) string) (bool, error) {
	if len(entries) == 0 {
		return false, nil
	}
	for _, e := range entries {
		if e.status != 'M' || e.newMode != "100644" && e.newMode != "100755" {
			return false, nil
		}
	}
	tmp, err := os.MkdirTemp(w.state, "merge-")
	if err != nil {
		return false, fmt.Errorf("isolate: %w", err)
	}
	defer os.RemoveAll(tmp)
	bases, err := w.catBlobs(ctx, base, entries)
	if err != nil {
		return false, err
	}
	// The tree is read and written through os.Root, as the landing's
	// install is (installOne): no link of the tree's is followed, in a
	// path or at its end (an in-place writer, or the user, may have made
	// one since the spawn), and nothing is written beyond the tree.
	root, err := os.OpenRoot(w.repo.top)
	if err != nil {
		return false, fmt.Errorf("isolate: %w", err)
	}
	defer root.Close()
	merged := make([][]byte, len(entries))
	modes := make([]os.FileMode, len(entries))
	for i, e := range entries {
		if bytes.IndexByte(bases[i], 0) >= 0 {
			return false, nil // binary: no line merge
		}
		basePath, cur := filepath.Join(tmp, fmt.Sprint(i)), filepath.Join(tmp, fmt.Sprint(i)+".cur")
		if err := os.WriteFile(basePath, bases[i], 0o600); err != nil {
			return false, fmt.Errorf("isolate: %w", err)
		}
		var ok bool
		if modes[i], ok = copyRegular(root, filepath.FromSlash(e.path), cur); !ok {
			return false, nil // gone, or no longer a regular file of the tree's
		}
		out, err := gitx.Run(ctx, w.repo.top, "merge-file", "-p", "-q", "--", cur, basePath, childFile(e.path))
		if err != nil {
			return false, nil // conflicts (exit > 0)
		}
		merged[i] = []byte(out)
	}
	for i, e := range entries {
		rel := filepath.FromSlash(e.path)
		part := rel + ".brood-merge-" + rand.Text()[:10]
		f, err := root.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, modes[i])
		if err == nil {
			_, err = f.Write(merged[i])
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				_ = root.Remove(part)
			}
		}
		if err == nil {
			err = renameIn(root, part, rel)
		}
		if err != nil {
			return false, fmt.Errorf("isolate: write the merge of %s: %w", e.path, err)
		}
	}
	return true, nil
}

// copyRegular copies the regular file at rel under root (no link
// followed) to dst, and returns its permissions; ok is false when it is
// not there or not a regular file.
func copyRegular(root *os.Root, rel, dst string) (os.FileMode, bool) {
	in, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, false
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0, false
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, false
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return st.Mode().Perm(), err == nil
}

// catBlobs reads the snapshot's version of each entry with one git call.
func (w *Workspace) catBlobs(ctx context.Context, tree string, entries []rawEntry) ([][]byte, error) {
	specs := make([]string, len(entries))
	for i, e := range entries {
		specs[i] = tree + ":" + e.path
	}
	return w.catSpecs(ctx, specs)
}

// catSpecs reads the blob each object name (an id, or TREE:PATH) names,
// with one git call.
func (w *Workspace) catSpecs(ctx context.Context, specs []string) ([][]byte, error) {
	var in bytes.Buffer
	for _, s := range specs {
		in.WriteString(s + "\n")
	}
	outs, err := gitx.Cmd{Dir: w.repo.top, Stdin: &in}.Run(ctx, "cat-file", "--batch")
	out := []byte(outs)
	if err != nil {
		return nil, fmt.Errorf("isolate: git cat-file: %w", err)
	}
	r := bufio.NewReader(bytes.NewReader(out))
	blobs := make([][]byte, len(specs))
	for i := range specs {
		header, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("isolate: git cat-file: %w", err)
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" {
			return nil, fmt.Errorf("isolate: git cat-file: unexpected %q", strings.TrimSpace(header))
		}
		var size int
		fmt.Sscan(f[2], &size)
		blobs[i] = make([]byte, size)
		if _, err := io.ReadFull(r, blobs[i]); err != nil {
			return nil, fmt.Errorf("isolate: git cat-file: %w", err)
		}
		r.ReadByte() // trailing newline
	}
	return blobs, nil
}
