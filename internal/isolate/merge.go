package isolate

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
	merged := make([][]byte, len(entries))
	for i, e := range entries {
		if bytes.IndexByte(bases[i], 0) >= 0 {
			return false, nil // binary: no line merge
		}
		basePath := filepath.Join(tmp, fmt.Sprint(i))
		if err := os.WriteFile(basePath, bases[i], 0o600); err != nil {
			return false, fmt.Errorf("isolate: %w", err)
		}
		cur := filepath.Join(w.repo.top, filepath.FromSlash(e.path))
		out, err := gitx.Run(ctx, w.repo.top, "merge-file", "-p", "-q", "--", cur, basePath, childFile(e.path))
		if err != nil {
			return false, nil // conflicts (exit > 0), or e.g. the parent deleted the file
		}
		merged[i] = []byte(out)
	}
	for i, e := range entries {
		dst := filepath.Join(w.repo.top, filepath.FromSlash(e.path))
		mode := os.FileMode(0o644)
		if e.newMode == "100755" {
			mode = 0o755
		}
		if st, err := os.Stat(dst); err == nil {
			mode = st.Mode().Perm()
		}
		part := dst + ".brood-merge"
		if err := os.WriteFile(part, merged[i], mode); err != nil {
			return false, fmt.Errorf("isolate: %w", err)
		}
		if err := os.Rename(part, dst); err != nil {
			os.Remove(part)
			return false, fmt.Errorf("isolate: %w", err)
		}
	}
	return true, nil
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
