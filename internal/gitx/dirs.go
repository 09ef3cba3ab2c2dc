package gitx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoRepo is Dirs' answer outside a git work tree.
var ErrNoRepo = errors.New("not in a git work tree")

// Dirs finds the git work tree holding dir by reading files only (no git
// runs, nothing the repository configures is consulted): top is the
// nearest ancestor with a .git entry; gitDir is that directory, or, when
// .git is a file ("gitdir: PATH", a linked worktree or a submodule), the
// directory it names; common is gitDir's "commondir" when it has one,
// else gitDir.
func Dirs(dir string) (top, gitDir, common string, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", "", "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		info, err := os.Lstat(filepath.Join(d, ".git"))
		if err == nil {
			top = d
			if info.IsDir() {
				gitDir = filepath.Join(d, ".git")
			} else if gitDir, err = readGitFile(filepath.Join(d, ".git")); err != nil {
				return "", "", "", err
			}
			break
		}
		if d == filepath.Dir(d) {
			return "", "", "", ErrNoRepo
		}
	}
	return top, gitDir, CommonDir(gitDir), nil
}

// CommonDir is the common git directory of gitDir: the one its
// "commondir" file names (a linked worktree's), else gitDir itself.
func CommonDir(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	c := strings.TrimSpace(string(b))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return filepath.Clean(c)
}

func readGitFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok || strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("%s: not a \"gitdir: PATH\" file", path)
	}
	p = strings.TrimSpace(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(path), p)
	}
	return filepath.Clean(p), nil
}
