package guard

import (
	"bufio"
	"go/build"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Tests that are not the workspace's (review-forge P2-4): `go test errors`
// runs the standard library's tests, `cd /tmp/fake && go test ./...` and
// `go test -C /tmp/fake ./...` another module's; their exit 0 says nothing
// of the workspace. A go test backs a pass only when every package it
// names is the workspace's: ".", a relative path (./..., ../x) that stays
// in it, an absolute path in it, or an import path under the module path
// of the go.mod nearest its directory.

// goValueFlags are go test's flags that take their value as the next word.
func goValueFlags() map[string]bool {
	return map[string]bool{
		"run": true, "skip": true, "count": true, "timeout": true, "p": true, "cpu": true, "parallel": true,
		"bench": true, "benchtime": true, "coverprofile": true, "covermode": true, "coverpkg": true, "o": true,
		"exec": true, "tags": true, "ldflags": true, "gcflags": true, "asmflags": true, "mod": true, "modfile": true,
		"C": true, "outputdir": true, "cpuprofile": true, "memprofile": true, "blockprofile": true, "mutexprofile": true,
		"trace": true, "vet": true, "shuffle": true, "fuzz": true, "fuzztime": true, "fuzzminimizetime": true,
		"pgo": true, "installsuffix": true, "pkgdir": true, "compiler": true, "gccgoflags": true, "toolexec": true,
		"overlay": true, "memprofilerate": true, "blockprofilerate": true, "mutexprofilefraction": true,
	}
}

// notWorkspace says why a go test command of a line runs tests that are
// not the workspace's ("" when they are, or cannot be told to be not).
func notWorkspace(in Input, command, goTest string) string {
	cwd := "."
	if in.Dirs != nil {
		for _, d := range in.Dirs(command) {
			next, ok := within(in.Workspace, cwd, d)
			if !ok {
				return "it changes directory to " + d + ", which is not the workspace's (or cannot be told to be)"
			}
			cwd = next
		}
	}
	if strings.Contains(goTest, "`") || strings.Count(goTest, "$(") != strings.Count(goTest, "$(go list ") {
		return "its packages or options come from a command's output, which cannot be told to be the workspace's (only $(go list ...) can)"
	}
	words := strings.Fields(goTest)[2:]
	var pkgs []string
	for j := 0; j < len(words); j++ {
		w := words[j]
		if w == "-args" || w == "--args" || w == "--" {
			break
		}
		if strings.HasPrefix(w, "$(go") {
			break // the packages go list prints, the rest of the words its own
		}
		if !strings.HasPrefix(w, "-") {
			pkgs = append(pkgs, w)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !hasValue && goValueFlags()[name] && j+1 < len(words) {
			j++
			value, hasValue = words[j], true
		}
		if name == "C" && hasValue {
			next, ok := within(in.Workspace, cwd, value)
			if !ok {
				return "it runs in " + value + " (-C), which is not the workspace"
			}
			cwd = next
		}
	}
	mod := modulePath(in.Workspace, cwd)
	for _, p := range pkgs {
		if !workspacePackage(in.Workspace, cwd, mod, p) {
			return "it tests " + p + ", which is not a package of the workspace"
		}
	}
	return ""
}

// within is dir (as cd would take it from cwd, both relative to the
// workspace) relative to the workspace, and whether it is in it.
func within(workspace, cwd, dir string) (string, bool) {
	if dir == "" || dir == "-" || strings.ContainsAny(dir, "$`~*?[") {
		return "", false
	}
	if filepath.IsAbs(dir) {
		if workspace == "" {
			return "", false
		}
		rel, err := filepath.Rel(workspace, dir)
		if err != nil {
			return "", false
		}
		dir, cwd = rel, "."
	}
	p := filepath.Clean(filepath.Join(cwd, dir))
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

// workspacePackage reports whether a go test package argument is the
// workspace's.
func workspacePackage(workspace, cwd, mod, p string) bool {
	path := strings.TrimSuffix(strings.TrimSuffix(p, "..."), "/")
	switch {
	case p == "." || p == "./..." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || p == ".." || filepath.IsAbs(p) || strings.HasSuffix(p, ".go"):
		if path == "" {
			path = "."
		}
		_, ok := within(workspace, cwd, path)
		return ok
	case mod != "":
		return path == mod || strings.HasPrefix(path, mod+"/")
	}
	return false
}

// modulePath is the module path of the go.mod nearest dir (relative to the
// workspace), "" when there is none in the workspace or it names a
// standard library package (module errors would make `go test errors`
// look like the workspace's).
func modulePath(workspace, dir string) string {
	if workspace == "" {
		return ""
	}
	for d := dir; ; d = filepath.Dir(d) {
		if mod, ok := readModule(filepath.Join(workspace, d, "go.mod")); ok {
			if mod == "" {
				return ""
			}
			if st, err := os.Stat(filepath.Join(build.Default.GOROOT, "src", mod)); err == nil && st.IsDir() {
				return ""
			}
			return mod
		}
		if d == "." {
			return ""
		}
	}
}

// readModule reads a go.mod's module line (a regular file only, not
// followed through a link, its first 64 KiB): found says the file is there.
func readModule(path string) (mod string, found bool) {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	f, err := os.Open(path)
	if err != nil {
		return "", true
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", true
	}
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`), true
		}
	}
	return "", true
}
