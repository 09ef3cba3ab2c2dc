package guard

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/textline"
)

// A runner the child rewrote (evidence3): `make test` runs the Makefile's
// recipe, `npm test` package.json's script (through .npmrc's shell),
// pytest what its config's addopts and conftest.py's hooks say, go test
// the modules go.work and go.mod's replace choose. When the child changed
// that file (the parent's diff, or an edit of it), the pass is evidence
// only if what the file now says is itself a test run brood would take:
// the recipe's or script's test line judged as a Bash line would be (a
// test command, its status the line's, nothing that undermines it, no
// option that runs no test), and nothing that redefines the runner
// (make's SHELL, .SHELLFLAGS, .ONESHELL, .IGNORE, a `-` recipe line,
// variables exported to the recipe that change what runs; .npmrc; a
// conftest hook that changes what runs or its result; pytest addopts
// that run no test or leave tests out; go.work; a replace by a path).
// Otherwise the concern says to run the test command itself.

// runnerRewritten says why a passing test command's runner is the
// child's rewrite ("" when it is not, or the rewrite is a test run).
func runnerRewritten(in Input, sc string) string {
	changed := changedFiles(in)
	if len(changed) == 0 {
		return ""
	}
	switch fam := family(runnerOf(in, sc)); fam {
	case "make":
		return makeRewritten(in, sc, changed)
	case "js":
		return scriptRewritten(in, sc, changed)
	case "pytest":
		return pytestRewritten(in, changed)
	case "go":
		return goRewritten(in, changed)
	case "cargo":
		if f := changedNamed(changed, ".cargo/config", ".cargo/config.toml"); f != "" {
			return "it changed " + f + ", which can run the tests through another program: run them with that change undone, or have the parent run them"
		}
	}
	return ""
}

// changedFiles are the files the child changed, relative to the
// workspace: the parent's diff, and every edit that went through.
func changedFiles(in Input) []string {
	var out []string
	add := func(p string) {
		p = filepath.ToSlash(filepath.Clean(p))
		if in.Workspace != "" && filepath.IsAbs(p) {
			if rel, err := filepath.Rel(in.Workspace, p); err == nil {
				p = filepath.ToSlash(rel)
			}
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, f := range in.Changed {
		add(f)
	}
	for _, c := range in.Calls {
		switch c.Tool {
		case "Write", "Edit", "MultiEdit", "NotebookEdit":
			if !c.IsError && c.Path != "" {
				add(c.Path)
			}
		}
	}
	return out
}

// changedNamed is the first changed file that is one of names (a path
// from the top, or a base name anywhere: "conftest.py").
func changedNamed(changed []string, names ...string) string {
	for _, f := range changed {
		for _, n := range names {
			if f == n || (!strings.Contains(n, "/") && filepath.Base(f) == n) {
				return f
			}
		}
	}
	return ""
}

// readSmall is a workspace file's text: a regular file, not followed
// through a link, its first 1 MiB.
func readSmall(in Input, rel string) (string, bool) {
	p := filepath.Join(in.Workspace, rel)
	st, err := os.Lstat(p)
	if err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	f, err := os.Open(p)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	return string(b), err == nil
}

// lineIsEvidence says why a script or recipe line is not a test run brood
// would take as evidence ("" when it is): it runs no test command, its
// status is not the test's, or it is undermined or runs no test.
func lineIsEvidence(in Input, line string) string {
	if !isTest(in, line) {
		return "runs no test command brood knows"
	}
	if !statusIsTests(in, line) {
		return "does not end with the test's own status"
	}
	if in.Undermined != nil {
		if why := in.Undermined(line); why != "" {
			return why
		}
	}
	for _, sc := range statusTests(in, line) {
		if why := noRun(sc, strings.Fields(sc), in.outsideTree); why != "" {
			return why
		}
	}
	return ""
}

// makeRewritten judges a make test run when the child changed a
// makefile: each changed makefile's recipe for the target must be a test
// run (make reads GNUmakefile, makefile or Makefile, whichever is first).
func makeRewritten(in Input, sc string, changed []string) string {
	targets := strings.Fields(makeTargets(sc))[1:]
	for _, f := range changed {
		if strings.HasSuffix(f, ".mk") {
			return "it changed " + f + ", which make may read: run the test command itself, not through make"
		}
		if b := filepath.Base(f); b != "Makefile" && b != "makefile" && b != "GNUmakefile" {
			continue
		}
		text, ok := readSmall(in, f)
		if !ok {
			return "it changed " + f + ", which cannot be read now: run the test command itself, not through make"
		}
		mk, directive := parseMakefile(text)
		if directive != "" {
			return "it changed " + f + ", which now holds " + textline.Line(directive, 80) + " (brood does not read what it makes run): run the test command itself, not through make"
		}
		for _, t := range targets {
			if why := recipeIsEvidence(in, mk, t); why != "" {
				return "it changed " + f + ", whose " + t + " recipe " + why + ": run the test command itself, not through make"
			}
		}
	}
	return ""
}

// scriptRewritten judges an npm/yarn/pnpm test run when the child
// changed package.json (its script must be a test run) or an .npmrc.
func scriptRewritten(in Input, sc string, changed []string) string {
	if f := changedNamed(changed, ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs"); f != "" {
		return "it changed " + f + ", which can make the package manager run another shell or program: run the test runner itself (npx jest, npx vitest run)"
	}
	f := changedNamed(changed, "package.json")
	words := strings.Fields(sc)
	if f == "" || len(words) < 2 || slices.Contains([]string{"npx", "jest", "vitest"}, words[0]) {
		return ""
	}
	name := "test"
	if len(words) > 2 && words[1] == "run" {
		name = words[2]
	}
	text, ok := readSmall(in, f)
	if !ok {
		return "it changed " + f + ", which cannot be read now: run the test runner itself"
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	script, found := "", false
	if json.Unmarshal([]byte(text), &pkg) == nil {
		script, found = pkg.Scripts[name]
	}
	if !found {
		return "it changed " + f + ", whose " + name + " script cannot be read: run the test runner itself"
	}
	if why := lineIsEvidence(in, script); why != "" {
		return "it changed " + f + ", whose " + name + " script (" + textline.Line(script, 120) + ") " + why + ": run the test runner itself"
	}
	return ""
}

var conftestHook = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(pytest_collection_modifyitems|pytest_runtest_makereport|pytest_report_teststatus|pytest_sessionfinish|pytest_runtest_protocol|pytest_runtest_call|pytest_pyfunc_call|pytest_ignore_collect|pytest_collect_file|pytest_cmdline_main|pytest_load_initial_conftests|collect_ignore|collect_ignore_glob|exitstatus|os\._exit|sys\.exit|pytest\.exit|pytest\.skip\(|allow_module_level)\b`)
})

// pytestRewritten judges a pytest run when the child changed a conftest
// or pytest's configuration.
func pytestRewritten(in Input, changed []string) string {
	for _, f := range changed {
		if filepath.Base(f) != "conftest.py" {
			continue
		}
		text, _ := readSmall(in, f)
		if m := conftestHook().FindString(text); m != "" {
			return "it changed " + f + ", which now uses " + m + " (it can change which tests run or what they report): run the tests with that change undone, or have the parent run them"
		}
	}
	for _, f := range changed {
		switch filepath.Base(f) {
		case "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini":
		default:
			continue
		}
		text, _ := readSmall(in, f)
		for line := range strings.Lines(text) {
			k, v, ok := strings.Cut(line, "=")
			if ok && slices.Contains(pytestCollectKeys(), strings.TrimSpace(k)) {
				return "it changed " + f + ", whose " + strings.TrimSpace(k) + " chooses which files and tests pytest collects: run pytest with that change undone"
			}
			if !ok || strings.TrimSpace(k) != "addopts" {
				continue
			}
			opts := "pytest " + strings.Trim(strings.TrimSpace(v), `"'[],`)
			if why := noRun("pytest", strings.Fields(opts), in.outsideTree); why != "" {
				return "it changed " + f + ", whose addopts " + strings.TrimPrefix(why, "it ") + ": run pytest with that change undone"
			}
			if sel := selectionOf(in, opts); len(sel.except)+len(sel.only) > 0 {
				return "it changed " + f + ", whose addopts select tests (" + strings.Join(append(sel.only, sel.except...), ", ") + "): run pytest with that change undone"
			}
		}
	}
	return ""
}

// goRewritten judges a go test when the child changed go.work, or go.mod
// to replace a module with a directory.
func goRewritten(in Input, changed []string) string {
	if f := changedNamed(changed, "go.work"); f != "" {
		return "it changed " + f + ", which chooses the modules go test builds: run the tests with that change undone, or have the parent run them"
	}
	for _, f := range changed {
		if filepath.Base(f) != "go.mod" {
			continue
		}
		text, _ := readSmall(in, f)
		for line := range strings.Lines(text) {
			if _, target, ok := strings.Cut(line, "=>"); ok {
				t := strings.TrimSpace(target)
				if strings.HasPrefix(t, ".") || strings.HasPrefix(t, "/") {
					return "it changed " + f + ", which replaces a module with the directory " + strings.Fields(t)[0] + ": run the tests with that change undone, or have the parent run them"
				}
			}
		}
	}
	return ""
}

// pytestCollectKeys are pytest settings that choose what it collects
// (review evidence3 P2-9).
func pytestCollectKeys() []string {
	return []string{"python_files", "python_classes", "python_functions", "testpaths", "norecursedirs", "collect_ignore", "required_plugins", "minversion", "usefixtures"}
}
