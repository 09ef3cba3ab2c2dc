//go:build !linux

package trust

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// nestedGitTops walks the tree under top for `.git` entries
// (nestedwalk_linux.go reads directories itself).
func nestedGitTops(top string) ([]string, error) {
	var tops []string
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != top && (errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist)) {
				return nil
			}
			return err
		}
		if d.Name() != ".git" || p == top {
			return nil
		}
		rel, _ := filepath.Rel(top, p)
		if rel = filepath.ToSlash(rel); rel != ".git" {
			tops = nestedTopsOf(tops, rel, d.IsDir())
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	return tops, err
}
