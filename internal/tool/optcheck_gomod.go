package tool

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
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

// goModOutside are the replace directives of the go.mod go reads running
// in dir (the nearest at or above it, up to the workspace ws), and the use
// directives of the go.work it reads with the replace directives of that
// go.work and of every module it uses, whose directory lies outside ws
// (links resolved). A file above the workspace is not the repository's,
// but the person's own. Each file is parsed as go parses it
// (golang.org/x/mod/modfile); one that does not parse is named too.
func goModOutside(ws, dir string) []risk {
	if ws == "" {
		return nil
	}
	var out []risk
	if path := nearestUp(ws, dir, "go.work"); path != "" {
		out = append(out, modFileOutside(ws, path, true)...)
	}
	if path := nearestUp(ws, dir, "go.mod"); path != "" {
		out = append(out, modFileOutside(ws, path, false)...)
	}
	return out
}

// modFileOutside are the directives of the go.mod or go.work at path
// naming a directory outside ws; for a go.work, also those of the go.mod
// of each module it uses.
func modFileOutside(ws, path string, work bool) []risk {
	rel, _ := filepath.Rel(ws, path)
	dirs, err := modDirs(path, readModFile(path), work)
	if err != nil {
		return []risk{{at: atEnd, opt: rel, why: "does not parse as go reads it (" + err.Error() + "): brood cannot tell which directories go test compiles"}}
	}
	var out []risk
	for _, d := range dirs {
		dir := d.path
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(path), dir)
		}
		dir = filepath.Clean(dir)
		if !inside(ws, dir) || realOutside(dir, ws) {
			out = append(out, risk{at: atEnd, opt: fmt.Sprintf("%s:%d (%s %s)", rel, d.line, d.verb, d.path), why: goModElsewhere})
			continue
		}
		if d.verb == "use" {
			if mod := filepath.Join(dir, "go.mod"); fileExists(mod) {
				out = append(out, modFileOutside(ws, mod, false)...)
			}
		}
	}
	return out
}

// nearestUp is the path of the file name in dir or the nearest directory
// above it, up to ws; "" when there is none.
func nearestUp(ws, dir, name string) string {
	for d := filepath.Clean(dir); inside(ws, d); d = filepath.Dir(d) {
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
		if d == filepath.Clean(ws) || d == filepath.Dir(d) {
			break
		}
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// modDir is a directory a go.mod or go.work directive names.
type modDir struct {
	verb, path string
	line       int
}

// modDirs are the local directories of src's replace directives (and,
// in a go.work, its use directives), parsed by go's own rules; a
// replacement by a module path and version is go's to fetch, not a
// directory.
func modDirs(path, src string, work bool) ([]modDir, error) {
	var out []modDir
	var replaces []*modfile.Replace
	if work {
		f, err := modfile.ParseWork(path, []byte(src), nil)
		if err != nil {
			return nil, err
		}
		for _, u := range f.Use {
			out = append(out, modDir{verb: "use", path: u.Path, line: u.Syntax.Start.Line})
		}
		replaces = f.Replace
	} else {
		f, err := modfile.Parse(path, []byte(src), nil)
		if err != nil {
			return nil, err
		}
		replaces = f.Replace
	}
	for _, r := range replaces {
		if r.New.Version == "" && isLocalPath(r.New.Path) {
			out = append(out, modDir{verb: "replace", path: r.New.Path, line: r.Syntax.Start.Line})
		}
	}
	return out, nil
}

// isLocalPath reports whether a directive's target is a directory (go's
// rule: it starts with ./ or ../ or is absolute).
func isLocalPath(p string) bool {
	return p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || filepath.IsAbs(p) ||
		strings.HasPrefix(p, `.\`) || strings.HasPrefix(p, `..\`)
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

// goCdRisk is why a rule for go test does not cover a go test run after a
// cd in the line: the go.mod (or go.work) go reads there, the nearest
// above the directory the cds lead to, replaces or uses a directory
// outside the workspace; or a cd leads where brood cannot follow.
func goCdRisk(c call, args []shWord) (risk, bool) {
	test := false
	for _, a := range args[1:] {
		if !strings.HasPrefix(a.text, "-") {
			test = a.text == "test"
			break
		}
	}
	if !test {
		return risk{}, false
	}
	dirs, ok := cdTargets(c)
	if !ok {
		return risk{opt: "cd", why: "makes go test run in a directory brood cannot check, whose go.mod could name code outside the workspace"}, true
	}
	for _, d := range dirs {
		if rks := goModOutside(c.workspace, d); len(rks) > 0 {
			return rks[0], true
		}
	}
	return risk{}, false
}
