package trust

import (
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// VenvPins are the SHA-256 sums of the Python virtual environments'
// activate scripts at the top of a workspace (bin/activate, X/bin/activate)
// as the parent found them when it spawned a child, by path relative to
// the workspace: a `source .venv/bin/activate` of the child's test line is
// exempt from Undermined only when its script is one of them, unchanged
// (redteam20 P2-2: the tree's activate can define `go`).
type VenvPins map[string][sha256.Size]byte

// PinVenvs reads the activate scripts of workspace (regular files only,
// no link followed, the first 1 MiB) of directories that hold a
// pyvenv.cfg, as `python -m venv` makes them. The caller drops those the
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
		if sum, ok := sumRegular(c); ok {
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
	got, ok := sumRegular(filepath.Join(workspace, rel))
	return ok && got == want
}

func sumRegular(path string) ([sha256.Size]byte, bool) {
	var zero [sha256.Size]byte
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return zero, false
	}
	f, err := os.Open(path)
	if err != nil {
		return zero, false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, 1<<20)); err != nil {
		return zero, false
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum, true
}

// Drop removes the pins of rels.
func (p VenvPins) Drop(rels []string) {
	for _, r := range rels {
		delete(p, filepath.ToSlash(r))
	}
}
