package tool

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A go test in the workspace compiles and runs every module its go.mod
// replaces with a directory and every one its go.work uses: one outside
// the workspace is code the rule's author never saw (/tmp/evil, ../other),
// as a test operand outside it is (testOutside). goModOutside finds them,
// each named by its file and line; a rule for go test does not cover such
// a run (it asks, saying where).

// goModElsewhere is why a replace or use outside the workspace is not
// covered.
const goModElsewhere = "points outside the workspace: go test compiles and runs the code there, which the rule's author never saw"

// maxModFile bounds the go.mod or go.work read.
const maxModFile = 1 << 20

// goModOutside are the replace directives of the workspace's go.mod, and
// the use and replace directives of its go.work, whose directory lies
// outside ws (links resolved). The files are those at the top of ws,
// which go reads running there (one above the workspace is not the
// repository's, but the person's own).
func goModOutside(ws string) []risk {
	if ws == "" {
		return nil
	}
	var out []risk
	for _, name := range []string{"go.mod", "go.work"} {
		path := nearestInside(ws, name)
		if path == "" {
			continue
		}
		for _, d := range modDirs(readModFile(path), name == "go.work") {
			dir := d.path
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(filepath.Dir(path), dir)
			}
			if !inside(ws, filepath.Clean(dir)) || realOutside(dir, ws) {
				rel, _ := filepath.Rel(ws, path)
				out = append(out, risk{at: atEnd, opt: fmt.Sprintf("%s:%d (%s %s)", rel, d.line, d.verb, d.path), why: goModElsewhere})
			}
		}
	}
	return out
}

// nearestInside is the path of the file name at the top of ws, or "".
func nearestInside(ws, name string) string {
	p := filepath.Join(ws, name)
	if _, err := os.Lstat(p); err == nil {
		return p
	}
	return ""
}

// modDir is a directory a go.mod or go.work directive names.
type modDir struct {
	verb, path string
	line       int
}

// modDirs are the local directories of src's replace directives (and,
// in a go.work, its use directives), in either form (one line, or a
// block in parentheses); a replacement by a module path and version is
// go's to fetch, not a directory.
func modDirs(src string, work bool) []modDir {
	var out []modDir
	block := ""
	for i, line := range strings.Split(src, "\n") {
		if c := strings.Index(line, "//"); c >= 0 {
			line = line[:c]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if block != "" {
			if f[0] == ")" {
				block = ""
				continue
			}
			f = append([]string{block}, f...)
		} else if len(f) == 2 && f[1] == "(" && (f[0] == "replace" || f[0] == "use") {
			block = f[0]
			continue
		}
		var dir string
		switch {
		case f[0] == "replace":
			k := indexOf(f, "=>")
			if k < 0 || k+1 >= len(f) || k+2 < len(f) && !isLocalPath(modUnquote(f[k+1])) {
				continue // a module path and its version
			}
			dir = modUnquote(f[k+1])
		case f[0] == "use" && work && len(f) >= 2:
			dir = modUnquote(f[1])
		default:
			continue
		}
		if isLocalPath(dir) {
			out = append(out, modDir{verb: f[0], path: dir, line: i + 1})
		}
	}
	return out
}

func indexOf(f []string, s string) int {
	for i, w := range f {
		if w == s {
			return i
		}
	}
	return -1
}

// isLocalPath reports whether a directive's target is a directory (go's
// rule: it starts with ./ or ../ or is absolute).
func isLocalPath(p string) bool {
	return p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || filepath.IsAbs(p)
}

func modUnquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// readModFile reads a go.mod or go.work of at most maxModFile bytes that
// is a regular file (a link followed), opened without blocking: a FIFO or
// a device in a hostile repository cannot hold the permission check.
func readModFile(path string) string {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return ""
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, maxModFile))
	return string(b)
}
