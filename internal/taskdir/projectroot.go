package taskdir

import (
	"os"
	"path/filepath"
)

// FindProjectRoot returns the nearest ancestor of dir holding .git or
// .brood, or dir itself when there is none: a command's project, and a
// child's (whose redactor reads its .env files).
func FindProjectRoot(dir string) string {
	for d := dir; ; {
		for _, marker := range []string{".git", StateDirName} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}
