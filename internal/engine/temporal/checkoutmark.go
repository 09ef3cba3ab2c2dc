package temporal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/taskdir"
)

// checkoutMark names the checkout holding root as a fleet submitter
// (origin.Mark): the hash of its git directory's identity (a linked
// worktree's own; taskdir.DirIdentity), "" when it has none (no git
// directory, or a file system that keeps no birth time). The checkout
// keeps it when moved or renamed; a clone, a copy, or a tree whose .git
// names another's git directory has another, and nothing in the tree a
// child could copy into another checkout makes it (a secret file in the
// git dir, as brood kept before, was: review35 P3-9).
func checkoutMark(root string) string {
	gitDir := findGitDir(root)
	if gitDir == "" {
		return ""
	}
	id, ok := taskdir.DirIdentity(gitDir)
	if !ok {
		return ""
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "brood checkout mark 2\x00%d %d %d", id.FS, id.Ino, id.Birth))
	return hex.EncodeToString(sum[:])
}

// findGitDir is the git directory of the checkout holding dir, as git
// finds it without its environment: the nearest .git up from dir, a
// directory, or a file naming one ("gitdir: PATH", a linked worktree's
// or a submodule's). "" when there is none.
func findGitDir(dir string) string {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		if st, err := os.Lstat(p); err == nil {
			switch {
			case st.IsDir():
				return p
			case st.Mode().IsRegular():
				return gitDirOfFile(d, p)
			}
			return ""
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// gitDirOfFile reads a linked worktree's .git file ("gitdir: PATH",
// relative to its directory d), and holds it only when that git directory
// names this file back (its gitdir file, as git worktree writes it): a
// tree shipped with a .git file pointing into someone else's checkout
// (another of the user's, say) borrows no secret. A submodule's, and a
// moved worktree's not yet repaired, have no mark.
func gitDirOfFile(d, p string) string {
	b, err := os.ReadFile(p)
	if err != nil || len(b) > 4096 {
		return ""
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	g := strings.TrimSpace(rest)
	if !filepath.IsAbs(g) {
		g = filepath.Join(d, g)
	}
	if st, err := os.Stat(g); err != nil || !st.IsDir() {
		return ""
	}
	back, err := os.ReadFile(filepath.Join(g, "gitdir"))
	if err != nil || len(back) > 4096 {
		return ""
	}
	if b := strings.TrimSpace(string(back)); b != p && !sameFile(b, p) {
		return ""
	}
	return g
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
