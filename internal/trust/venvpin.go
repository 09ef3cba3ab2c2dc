package trust

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// VenvPins are the SHA-256 sums of the Python virtual environments' bin/
// directories at the top of a workspace (bin/activate, X/bin/activate)
// as the parent found them when it spawned a child, by the activate
// script's path relative to the workspace: a `source .venv/bin/activate`
// of the child's test line is exempt from Undermined only when its bin/ is
// one of them, unchanged (redteam20 P2-2: the tree's activate can define
// `go`; review #1: activate puts bin/ first on PATH, so a `go` or
// `pytest` the child writes there answers the test command). The sum
// covers each entry's name and kind, a regular file's size and content,
// a link's target and the content of the file it leads to.
type VenvPins map[string][sha256.Size]byte

// PinVenvs sums the bin/ directories (sumBin) whose activate is a
// regular file, of directories that hold a pyvenv.cfg, as `python -m venv` makes them. The caller drops those the
// repository tracks (Drop): a venv is made on the machine, never shipped,
// and a repository is hostile.
func PinVenvs(workspace string) VenvPins {
	pins := VenvPins{}
	cands, _ := filepath.Glob(filepath.Join(workspace, "*", "bin", "activate"))
	cands = append(cands, filepath.Join(workspace, "bin", "activate"))
	for _, c := range cands {
		// A venv's directory holds its pyvenv.cfg; a bin/activate without
		// one is some other script.
		if st, err := os.Lstat(filepath.Join(filepath.Dir(filepath.Dir(c)), "pyvenv.cfg")); err != nil || !st.Mode().IsRegular() {
			continue
		}
		if sum, ok := sumBin(c); ok {
			rel, err := filepath.Rel(workspace, c)
			if err == nil {
				pins[filepath.ToSlash(rel)] = sum
			}
		}
	}
	return pins
}

// Trusts reports whether path (as a line wrote it: relative to the
// workspace, or absolute in it) is a pinned activate script that is
// unchanged in workspace now.
func (p VenvPins) Trusts(workspace, path string) bool {
	if filepath.IsAbs(path) {
		rel, err := filepath.Rel(workspace, path)
		if err != nil {
			return false
		}
		path = rel
	}
	rel := filepath.ToSlash(filepath.Clean(path))
	if strings.HasPrefix(rel, "../") {
		return false
	}
	want, ok := p[rel]
	if !ok {
		return false
	}
	got, ok := sumBin(filepath.Join(workspace, rel))
	return ok && got == want
}

// sumBin is the sum of the bin/ directory of an activate script, which
// must be a regular file; false when anything in it cannot be read.
func sumBin(activate string) ([sha256.Size]byte, bool) {
	var zero [sha256.Size]byte
	if st, err := os.Lstat(activate); err != nil || !st.Mode().IsRegular() {
		return zero, false
	}
	dir := filepath.Dir(activate)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return zero, false
	}
	h := sha256.New()
	for _, e := range entries { // sorted by name
		p := filepath.Join(dir, e.Name())
		st, err := os.Lstat(p)
		if err != nil {
			return zero, false
		}
		fmt.Fprintf(h, "%q %v %d\n", e.Name(), st.Mode(), st.Size())
		if st.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return zero, false
			}
			fmt.Fprintf(h, "-> %q\n", target)
		}
		if fst, err := os.Stat(p); err == nil && fst.Mode().IsRegular() {
			sum, ok := sumFile(p)
			if !ok {
				return zero, false
			}
			fmt.Fprintf(h, "%x %d\n", sum, fst.Size())
		}
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum, true
}

// sumFile is the SHA-256 of a file's whole content (a link followed).
func sumFile(path string) ([sha256.Size]byte, bool) {
	var zero, sum [sha256.Size]byte
	f, err := os.Open(path)
	if err != nil {
		return zero, false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return zero, false
	}
	copy(sum[:], h.Sum(nil))
	return sum, true
}

// Drop removes the pins of rels.
func (p VenvPins) Drop(rels []string) {
	for _, r := range rels {
		delete(p, filepath.ToSlash(r))
	}
}
