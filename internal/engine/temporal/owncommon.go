package temporal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/taskdir"
)

// ownCommon checks that common, the common git dir git reports for dir
// (links followed), is the checkout's own, as brood finds it without
// asking git: the nearest .git up from dir that is a directory (no link),
// a linked work tree's .git file whose git dir names it back (its common
// dir is the one that git dir is in: COMMON/worktrees/NAME), or a
// submodule's whose git dir is in the superproject's .git/modules/ and
// names dir as its work tree. The same directory by identity (device's
// file system, inode, birth time: taskdir.DirIdentity), by path where the
// file system keeps no birth time. So a .git file or link pointing into
// another checkout, or a commondir file planted in the git dir, never
// makes this checkout's landing read and write the other's records (it
// would land that checkout's calls here, and say they are in the other's
// tree).
func ownCommon(ctx context.Context, dir, common string) error {
	own := ownGitDir(ctx, dir)
	if own != "" && filepath.Base(filepath.Dir(own)) == "worktrees" {
		own = filepath.Dir(filepath.Dir(own))
	}
	if own != "" && sameDirID(own, common) {
		return nil
	}
	return fmt.Errorf("the git dir of %s is %s, which is not this checkout's own .git (a .git file or link pointing into another checkout, or a commondir file): brood keeps no records of it here; make %s's .git its own directory again (or a work tree git worktree add made), then run brood again", dir, common, dir)
}

// ownGitDir is the git dir of the checkout holding dir as brood finds it
// (findGitDir), or a submodule's (submoduleGitDir); "" when none.
func ownGitDir(ctx context.Context, dir string) string {
	if g := findGitDir(dir); g != "" {
		return g
	}
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		if st, err := os.Lstat(p); err == nil {
			if !st.Mode().IsRegular() {
				return ""
			}
			return submoduleGitDir(ctx, d, p)
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// submoduleGitDir is the git dir a submodule's .git file p (in d) names,
// when it is in the .git/modules/ of a directory above d whose .git is a
// directory, and its configuration's core.worktree is d, as git submodule
// writes them; "" otherwise.
func submoduleGitDir(ctx context.Context, d, p string) string {
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
	g = filepath.Clean(g)
	inModules := false
	for up := filepath.Dir(d); ; up = filepath.Dir(up) {
		sup := filepath.Join(up, ".git")
		if st, err := os.Lstat(sup); err == nil && st.IsDir() && strings.HasPrefix(g, filepath.Join(sup, "modules")+"/") {
			inModules = true
			break
		}
		if filepath.Dir(up) == up {
			break
		}
	}
	if !inModules {
		return ""
	}
	wt, err := gitx.Run(ctx, d, "config", "--file", filepath.Join(g, "config"), "core.worktree")
	if err != nil {
		return ""
	}
	w := strings.TrimSpace(wt)
	if !filepath.IsAbs(w) {
		w = filepath.Join(g, w)
	}
	if !sameDirID(w, d) {
		return ""
	}
	return g
}

// sameDirID is whether a and b are the same directory: by identity, or by
// path (links followed) where the file system keeps no birth time.
func sameDirID(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return false
	}
	ia, ok1 := taskdir.DirIdentity(ra)
	ib, ok2 := taskdir.DirIdentity(rb)
	if ok1 && ok2 {
		return ia == ib
	}
	return ra == rb
}
