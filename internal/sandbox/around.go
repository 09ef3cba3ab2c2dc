package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// HiddenPaths are the paths p's child may not read: Hidden, and
// HiddenAround split around Keep (HideAround) now, when the rules are
// built: a shared directory's entries (the host's /tmp) change by the
// second, so a policy names the directory, not what it holds then.
func (p Policy) HiddenPaths() []string {
	if len(p.HiddenAround) == 0 {
		return p.Hidden
	}
	return append(slices.Clone(p.Hidden), HideAround(p.HiddenAround, p.Keep)...)
}

// HideAround is hidden with every path that holds one of keep (a path the
// child must still read: its tree, its task directory) replaced by its
// entries but the ones on the way to keep, recursively: what is beside
// keep stays hidden, keep itself does not (a hidden path beneath a kept
// one stays hidden: ~/.ssh in a tree that is the home). An entry made later in a
// directory so split is not readable (addReadRules). A directory
// that cannot be listed is hidden whole, with what it holds.
func HideAround(hidden, keep []string) []string {
	clean := make([]string, len(keep))
	for i, k := range keep {
		clean[i] = filepath.Clean(k)
	}
	var out []string
	for _, h := range hidden {
		out = append(out, splitAround(filepath.Clean(h), clean, 0)...)
	}
	return out
}

// maxSplitDepth bounds splitAround's recursion (keep paths are at most a
// few levels beneath a hidden one).
const maxSplitDepth = 16

// splitAround is HideAround of h, keep clean.
func splitAround(h string, keep []string, depth int) []string {
	var inside []string
	for _, k := range keep {
		if k == h {
			return nil
		}
		if within(h, k) {
			inside = append(inside, k)
		}
	}
	if len(inside) == 0 || depth >= maxSplitDepth {
		return []string{h}
	}
	ents, err := os.ReadDir(h)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing there to hide but what keep names
	} else if err != nil {
		return []string{h} // not listed, so hidden whole, keep with it
	}
	var out []string
	for _, e := range ents {
		out = append(out, splitAround(filepath.Join(h, e.Name()), inside, depth+1)...)
	}
	return out
}

// within reports whether path is root or beneath it (both clean and
// absolute: a prefix on a separator, no filepath.Rel, which the split
// calls for every pair of hidden and kept paths).
func within(root, path string) bool {
	return path == root || root == "/" || strings.HasPrefix(path, root) && path[len(root)] == '/'
}
