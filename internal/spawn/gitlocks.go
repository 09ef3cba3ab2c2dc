package spawn

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// leftGitLocks are the git lock files in workspace's .git (index.lock,
// HEAD.lock, config.lock, packed-refs.lock, refs/**.lock) made or touched
// since the child started: a writer that ends with one there leaves the
// user's next commit failing ("Unable to create '.git/index.lock': File
// exists"), and its report must say so (red team 21 P3-4). They are named,
// not removed: a git of the user's own may hold one.
func leftGitLocks(workspace string, since time.Time) []string {
	gitDir := filepath.Join(workspace, ".git")
	if fi, err := os.Lstat(gitDir); err != nil || !fi.IsDir() {
		return nil
	}
	var out []string
	check := func(path string, d fs.DirEntry) {
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".lock") {
			if fi, err := d.Info(); err == nil && !fi.ModTime().Before(since.Add(-time.Second)) {
				if rel, err := filepath.Rel(workspace, path); err == nil {
					out = append(out, filepath.ToSlash(rel))
				}
			}
		}
	}
	if ents, err := os.ReadDir(gitDir); err == nil {
		for _, d := range ents {
			check(filepath.Join(gitDir, d.Name()), d)
		}
	}
	_ = filepath.WalkDir(filepath.Join(gitDir, "refs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			check(path, d)
		}
		return nil
	})
	slices.Sort(out)
	return out
}
