package guard

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/textline"
)

// Runs whose result is unknown (evidence3). A test command that failed
// with its output hidden (`go test ./... >/dev/null`), piped into a
// filter (`| grep -v FAIL`), run before a `;` (its status is not the
// line's), or of a runner whose output the guard does not read (pytest,
// jest, cargo, make, ...) may have failed in a way no output names. The
// last passing run must then run all it ran (covers): the same runner,
// the same or more targets (packages, paths; none means the runner's
// whole suite, but go test's own directory), and no name selection it did
// not have (-run, -k, -t, a cargo filter). A go test whose output names
// its failures is judged by those names instead (leftout.go).

// unknownRun is one test command earlier in the task, or in the last
// run's own line, that may have failed unseen.
type unknownRun struct {
	words string // the command's words
	why   string // what the concern says of it
	dir   string // the directory its line changed to (lineDir)
}

// unknownRuns are the test commands up to calls[at] whose result the
// guard cannot read and that may have failed (the passing commands of
// calls[at] itself excepted).
func unknownRuns(in Input, at int) []unknownRun {
	var out []unknownRun
	for i, c := range in.Calls[:at+1] {
		if c.Tool != "Bash" || in.wasRefused(c) || !isTest(in, c.Command) {
			continue
		}
		status := statusTests(in, c.Command)
		for _, s := range testSegments(in, c.Command) {
			isStatus := slices.Contains(status, s.Words)
			if isStatus && !c.IsError {
				continue // exit 0 proves it passed
			}
			if why := unknownWhy(in, c, s, isStatus, i == at); why != "" {
				out = append(out, unknownRun{s.Words, why, lineDir(in, c.Command)})
			}
		}
	}
	return out
}

// unknownWhy says why one test command's result is unknown ("" when its
// output, or the line's status, tells it).
func unknownWhy(in Input, c Call, s Segment, isStatus, last bool) string {
	goTest := strings.HasPrefix(s.Words, "go test")
	switch {
	case s.Hidden:
		return "with its output hidden"
	case len(s.Pipe) > 0 && provenByOutput(in, c):
		return ""
	case len(s.Pipe) > 0:
		return "with its output piped through " + s.Pipe[len(s.Pipe)-1]
	case goTest && (!c.IsError || namesFailures(c.Result)):
		return "" // its failures, if any, are named in the output
	case goTest:
		return "which failed with no failure its output names"
	case last && !isStatus:
		return "in the same line, whose status is not the line's (join them with &&)"
	case !isStatus:
		return "whose status was not its line's"
	}
	return "which failed"
}

// testSegments are the test commands of a line that run in its
// foreground, with where their output goes (its status commands alone,
// shown, without Input.Commands).
func testSegments(in Input, command string) []Segment {
	return testSegmentsIn(in, command, 0)
}

// testSegmentsIn is testSegments looking into `sh -c SCRIPT` (bash, dash,
// zsh too) up to depth 3: a test the script runs is one of the line's,
// its output hidden when the shell's is (sh -c 'go test ./... >/dev/null').
func testSegmentsIn(in Input, command string, depth int) []Segment {
	if in.Commands != nil {
		if segs, ok := in.Commands(command); ok {
			var out []Segment
			for _, s := range segs {
				if s.Writes || s.Background {
					continue
				}
				if testPrefix(in, s.Words) {
					out = append(out, s)
					continue
				}
				if script, ok := shellScript(s.Words); ok && depth < 3 {
					for _, inner := range testSegmentsIn(in, script, depth+1) {
						inner.Hidden = inner.Hidden || s.Hidden
						inner.Pipe = append(slices.Clone(inner.Pipe), s.Pipe...)
						out = append(out, inner)
					}
				}
			}
			return out
		}
	}
	var out []Segment
	for _, w := range statusTests(in, command) {
		out = append(out, Segment{Words: w})
	}
	return out
}

// namesFailures reports go test output that names a failed test or
// package (what failures reads).
func namesFailures(out string) bool {
	for line := range strings.Lines(out) {
		if failedTestLine().MatchString(line) || failedPkgLine().MatchString(strings.TrimRight(line, "\r\n")) || strings.Contains(line, `"Action":"fail"`) {
			return true
		}
	}
	return false
}

// notCovered says which unknown run the passing line at calls[at] does
// not run all of ("" it runs all of each).
func notCovered(in Input, at int) string {
	status := statusTests(in, in.Calls[at].Command)
	dir := lineDir(in, in.Calls[at].Command)
	for _, u := range unknownRuns(in, at) {
		if !slices.ContainsFunc(status, func(s string) bool {
			sel := selectionOf(in, s)
			if fam := family(sel.runner); fam != "go" && fam != "pytest" && (dir != u.dir || dir == "?") {
				return false // another directory's suite
			}
			return covers(in, inDir(in, sel, dir), inDir(in, selectionOf(in, u.words), u.dir))
		}) {
			return fmt.Sprintf("it does not run all that %q ran, %s earlier in the task or its line", textline.Line(u.words, 120), u.why)
		}
	}
	return ""
}

// covers reports whether a run selected as s runs all that u ran.
func covers(in Input, s, u selection) bool {
	if s.runner != u.runner {
		return false
	}
	for _, o := range s.only {
		if !slices.Contains(u.only, o) {
			return false
		}
	}
	for _, e := range s.except {
		if !slices.Contains(u.except, e) {
			return false
		}
	}
	if s.runner == "go test" {
		return goCovers(s.targets, u.targets)
	}
	if len(s.targets) == 0 {
		return true
	}
	for _, t := range u.targets {
		if !slices.Contains(s.targets, t) && !(family(s.runner) == "pytest" && slices.ContainsFunc(s.targets, func(p string) bool { return pathCovers(p, t) })) {
			return false
		}
	}
	return len(u.targets) > 0
}

// pathCovers reports whether pytest's target p runs all of target t: the
// same path (tests and tests/ alike), a directory above it, or the file
// of a node id (tests/test_a.py covers tests/test_a.py::test_x).
func pathCovers(p, t string) bool {
	norm := func(x string) string {
		x = strings.TrimSuffix(strings.TrimPrefix(strings.Trim(x, `'"`), "./"), "/")
		if x == "" {
			return "."
		}
		return x
	}
	p, t = norm(p), norm(t)
	if strings.Contains(p, "::") || strings.HasPrefix(t, "..") || strings.HasPrefix(t, "/") != strings.HasPrefix(p, "/") {
		return p == t
	}
	file, _, _ := strings.Cut(t, "::")
	return p == file || p == "." || strings.HasPrefix(file, p+"/")
}

// goCovers reports whether go test's package patterns s match every
// package of u's (none: the current directory's).
func goCovers(s, u []string) bool {
	norm := func(ps []string) []string {
		if len(ps) == 0 {
			return []string{"."}
		}
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/")
			if out[i] == "" {
				out[i] = "."
			}
		}
		return out
	}
	ss, uu := norm(s), norm(u)
	for _, t := range uu {
		if !slices.ContainsFunc(ss, func(p string) bool {
			switch {
			case p == t:
				return true
			case p == "...":
				// a directory below this one; an import path's first
				// element has a dot (example.com/x), a file's a suffix
				return t == "." || !strings.HasPrefix(t, "..") && !strings.Contains(strings.Split(t, "/")[0], ".")
			case strings.HasSuffix(p, "/..."):
				base := strings.TrimSuffix(p, "/...")
				return t == base || strings.HasPrefix(t, base+"/")
			}
			return false
		}) {
			return false
		}
	}
	return true
}

// lineDir is the directory a line's cd/pushd lead to, relative to the
// workspace ("." none; "?" one brood cannot follow: absolute, .., ~, -,
// a variable).
func lineDir(in Input, command string) string {
	if in.Dirs == nil {
		return "."
	}
	dir := "."
	for _, d := range in.Dirs(command) {
		if d == "" || strings.HasPrefix(d, "/") || strings.HasPrefix(d, "~") || d == "-" || strings.ContainsAny(d, "$`*?") || slices.Contains(strings.Split(d, "/"), "..") {
			return "?"
		}
		dir = path.Join(dir, d)
	}
	return dir
}

// inDir is a selection's go or pytest path targets as seen from the
// workspace's top when run in dir (`cd ok && go test ./...` runs ok/...);
// one in a directory brood cannot follow keeps its words and the
// directory as a target of its own, so that it covers nothing else.
// Another runner's selection is returned as it is.
func inDir(in Input, sel selection, dir string) selection {
	if dir == "." {
		return sel
	}
	fam := family(sel.runner)
	if fam != "go" && fam != "pytest" {
		return sel // judged by notCovered: the same directory or not
	}
	if dir == "?" {
		sel.targets = append(slices.Clone(sel.targets), "cd:"+dir)
		return sel
	}
	targets := sel.targets
	if len(targets) == 0 {
		targets = []string{"."}
	}
	out := make([]string, 0, len(targets))
	for _, t := range targets {
		if strings.HasPrefix(t, "/") || (fam == "go" && !strings.HasPrefix(t, ".")) {
			out = append(out, t) // an absolute path, an import path
			continue
		}
		j := path.Join(dir, t)
		if fam == "go" {
			j = "./" + j
			if strings.HasSuffix(t, "...") {
				j = strings.TrimSuffix(j, "...") + "/..."
				j = strings.ReplaceAll(j, "//", "/")
			}
		}
		out = append(out, j)
	}
	sel.targets = out
	return sel
}

// shellScript is the script a `sh -c SCRIPT` command runs (its words
// after -c, as LineCommands joins them).
func shellScript(words string) (string, bool) {
	f := strings.Fields(words)
	if len(f) < 3 || !slices.Contains([]string{"sh", "bash", "dash", "zsh", "ksh"}, path.Base(f[0])) {
		return "", false
	}
	for i, w := range f[1:] {
		if w == "-c" || (strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.HasSuffix(w, "c")) {
			return strings.Join(f[i+2:], " "), true
		}
		if !strings.HasPrefix(w, "-") {
			return "", false
		}
	}
	return "", false
}
