package isolate

import (
	"errors"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// UpperChanges is what an overlay copy's upper layer holds, as
// repository-relative paths.
type UpperChanges struct {
	Set    []string // regular files and symlinks written
	Del    []string // whiteouts: paths deleted
	Opaque []string // opaque directories: replaced wholesale
}

// pathspecs are the paths whose old state a patch must compare: every
// written or deleted path, and every opaque directory (which matches
// everything the snapshot had beneath it).
func (c UpperChanges) pathspecs() []string {
	out := make([]string, 0, len(c.Set)+len(c.Del)+len(c.Opaque))
	out = append(out, c.Set...)
	out = append(out, c.Del...)
	return append(out, c.Opaque...)
}

// ReadUpper walks an overlay copy's upper layer (a local isolated child's,
// or a fleet worker's copy in package codesnap). Its cost follows the size
// of the change, not of the repository. The top-level .git is skipped: a
// child's commits, index updates and stashes happen in its copy only and
// are not part of the change. An entry that goes away during the walk (a
// partial change, read while the child still works) is skipped.
func ReadUpper(upper string) (UpperChanges, error) {
	var c UpperChanges
	err := filepath.WalkDir(upper, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(upper, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			if isOpaque(p) {
				c.Opaque = append(c.Opaque, rel)
			}
		case d.Type()&fs.ModeCharDevice != 0:
			var st unix.Stat_t
			if err := unix.Lstat(p, &st); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if st.Rdev == 0 {
				c.Del = append(c.Del, rel)
			}
		case d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0:
			c.Set = append(c.Set, rel)
		}
		return nil
	})
	return c, err
}

// isOpaque reports whether overlayfs marked dir as hiding the lower
// directory of the same name (set when a child removes a directory and
// creates it again). The attribute is user.* under userxattr mounts and
// trusted.* otherwise.
func isOpaque(dir string) bool {
	buf := make([]byte, 4)
	for _, name := range []string{"user.overlay.opaque", "trusted.overlay.opaque"} {
		n, err := unix.Lgetxattr(dir, name, buf)
		if err == nil && n >= 1 && buf[0] == 'y' {
			return true
		}
	}
	return false
}
