package tool

import (
	"cmp"
	"path/filepath"
	"strings"
	"sync"
)

// A rule for a test runner (Bash(go test:*), Bash(pytest:*)) is one for
// this project's tests: the runner runs the repository's code, so the rule
// is kept in the project's own settings (advicecode.go, runsRepoCode). A
// test file or package outside the workspace (go test /tmp/x_test.go,
// pytest ../x.py) is code its author never saw, and the evidence guardrail
// takes a run of it for no evidence (guard/workspace.go): no such rule
// covers it. go's -C (another directory's go.mod and tests) is judged by
// its flag (goElsewhere), whatever the directory.

// outsideTest is why a test operand outside the workspace is not covered.
const outsideTest = "is a test outside the workspace: code the rule's author never saw (a rule for a test runner is one for this project's tests), and a run of it is no evidence that the workspace's tests pass"

// goElsewhere is why go's -C is not covered.
const goElsewhere = "runs go in another directory, whose go.mod (toolchain, replace directives) and tests no rule has seen"

// goTestValueFlags are go test's flags that take the next word as their
// value (as the evidence guardrail reads them, guard.goValueFlags).
var goTestValueFlags = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, f := range []string{"run", "skip", "count", "timeout", "p", "cpu", "parallel", "bench", "benchtime", "coverprofile",
		"covermode", "coverpkg", "o", "exec", "tags", "ldflags", "gcflags", "asmflags", "mod", "modfile", "C", "outputdir",
		"cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "vet", "shuffle", "fuzz", "fuzztime",
		"fuzzminimizetime", "pgo", "installsuffix", "pkgdir", "compiler", "gccgoflags", "toolexec", "overlay",
		"memprofilerate", "blockprofilerate", "mutexprofilefraction", "list"} {
		m[f] = true
	}
	return m
})

// goTestOutside are the package and file operands of a go test that lie
// outside ws (testOutside); an import path (example.com/x, errors) is
// go's to find and is not judged here.
func goTestOutside(args []shWord, ws string) []risk {
	var out []risk
	sub := ""
	for i := 1; i < len(args); i++ {
		a := args[i].text
		if strings.HasPrefix(a, "-") {
			if sub == "test" && (a == "-args" || a == "--args") {
				break
			}
			name, _, has := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !has && goTestValueFlags()[name] {
				i++
			}
			continue
		}
		if sub == "" {
			if sub = a; sub != "test" {
				return nil
			}
			continue
		}
		if args[i].lit && testOutside(a, ws, true) {
			out = append(out, risk{at: i, opt: a, why: outsideTest})
		}
	}
	if sub == "test" {
		out = append(out, goModOutside(ws, ws)...)
	}
	return out
}

// pytestOutside are pytest's file and directory operands (a node id's
// file, tests/x.py::test_a) that lie outside ws.
func pytestOutside(args []shWord, ws string) []risk {
	var out []risk
	for _, i := range operandsOf(args, "kmpcoWrn") {
		file, _, _ := strings.Cut(args[i].text, "::")
		if args[i].lit && testOutside(file, ws, false) {
			out = append(out, risk{at: i, opt: args[i].text, why: outsideTest})
		}
	}
	return out
}

// testOutside reports whether a test runner's operand w names a path
// outside the workspace ws: an absolute path not in it, a home-relative
// one, or a relative one that climbs out of where it runs. For go, only a
// path-like word (., ./x, ../x, /x, ~/x, x.go) is a path; another is an
// import path.
func testOutside(w, ws string, goPkg bool) bool {
	p := strings.TrimSuffix(strings.TrimSuffix(w, "..."), "/")
	switch {
	case strings.HasPrefix(w, "~"):
		return true
	case filepath.IsAbs(w):
		return !inside(ws, filepath.Clean(cmp.Or(p, "/"))) || realOutside(cmp.Or(p, "/"), ws)
	case goPkg && !(w == "." || w == ".." || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../") || strings.HasSuffix(w, ".go")):
		return false
	}
	if p != "" && p != "." && !staysInside(p) {
		return true
	}
	return realOutside(cmp.Or(p, "."), ws)
}

// realOutside reports whether the path p (relative to ws) resolves, through
// its symlinks, outside ws's real path: ws/link -> /tmp makes ./link/...
// a test outside (review P3-3). What does not exist yet is judged by the
// part that does.
func realOutside(p, ws string) bool {
	if ws == "" {
		return false
	}
	root, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws, p)
	}
	real, rest := filepath.Clean(p), ""
	for {
		r, err := filepath.EvalSymlinks(real)
		if err == nil {
			return !inside(root, filepath.Join(r, rest))
		}
		parent := filepath.Dir(real)
		if parent == real {
			return false
		}
		real, rest = parent, filepath.Join(filepath.Base(real), rest)
	}
}
