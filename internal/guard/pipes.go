package guard

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A go test piped through tail, tee or cat (evidence3): `go test ./... 2>&1
// | tail -n 20` exits with tail's status, so the line's 0 says nothing of
// the tests; its output can. go test ends a run in which any package
// failed with a line `FAIL` (after each failed package's `FAIL pkg`), and
// tail keeps the end, tee and cat the whole: such an output that shows no
// failure line and ends with a package's `ok` (or `[no test files]`)
// line proves a pass. Any other filter (grep -v FAIL, head, sed, sort)
// can drop that line; a line with `set -o pipefail` needs no proof (its
// status is every element's: trust.StatusCommands).

// provenByOutput reports a Bash call whose one test command (go test or
// pytest), piped only through tail, tee or cat, shows in its whole output
// that it passed.
func provenByOutput(in Input, c Call) bool {
	segs := testSegments(in, c.Command)
	if len(segs) != 1 || segs[0].Hidden || len(segs[0].Pipe) == 0 {
		return false
	}
	if slices.ContainsFunc(segs[0].Pipe, func(p string) bool { return !passthrough(p) }) {
		return false
	}
	switch family(runnerOf(in, segs[0].Words)) {
	case "go":
		return goOutputPassed(c.Result)
	case "pytest":
		return pytestOutputPassed(c.Result)
	}
	return false
}

var pytestSummary = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^=*\s*\d+ passed(, \d+ (skipped|deselected|xfailed|xpassed|warnings?))*( in [\d.]+s( \([\d:]+\))?)?\s*=*$`)
})

// pytestOutputPassed reports pytest output, whole, whose last line is
// its summary of a run in which tests passed and none failed or erred
// (pytest ends every run with that line, which tail keeps).
func pytestOutputPassed(out string) bool {
	if clipped(out) {
		return false
	}
	last := ""
	for line := range strings.Lines(out) {
		if t := strings.TrimSpace(line); t != "" {
			last = t
		}
	}
	return pytestSummary().MatchString(last)
}

// passthrough reports a filter that keeps go test's last line: tail
// (with a line or byte count), tee (to files) or cat (of its input).
func passthrough(words string) bool {
	f := strings.Fields(words)
	if len(f) == 0 {
		return false
	}
	switch f[0] {
	case "tail":
		for j := 1; j < len(f); j++ {
			w := f[j]
			switch {
			case w == "-n" || w == "-c" || w == "--lines" || w == "--bytes":
				j++
			case strings.HasPrefix(w, "--lines=") || strings.HasPrefix(w, "--bytes=") || w == "-q":
			case strings.HasPrefix(w, "-") && isDigits(strings.TrimLeft(w[1:], "nc")):
			default:
				return false // a file, +N (from the start), -f
			}
		}
		return true
	case "tee":
		return !slices.ContainsFunc(f[1:], func(w string) bool {
			return strings.HasPrefix(w, "-") && w != "-a" && w != "--append" && w != "-i" && w != "-p"
		})
	case "cat":
		return len(f) == 1 || (len(f) == 2 && f[1] == "-")
	}
	return false
}

// goOutputPassed reports go test output, whole, that ends with a
// package's ok (or no-test-files) line and shows no failure and a test
// that ran.
func goOutputPassed(out string) bool {
	if clipped(out) || !ranATest(out) {
		return false
	}
	last := ""
	for line := range strings.Lines(out) {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if t == "FAIL" || strings.HasPrefix(t, "FAIL\t") || strings.HasPrefix(t, "FAIL ") || strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "panic:") {
			return false
		}
		last = t
	}
	return strings.HasPrefix(last, "ok ") || strings.HasPrefix(last, "ok\t") || strings.HasPrefix(last, "?") && strings.Contains(last, "[no test files]")
}

// judgedTests are the test commands of a line whose pass the line's exit
// status 0 or its output proves: its status commands' tests, or its one
// go test piped through tail, tee or cat whose output proves it passed.
func judgedTests(in Input, c Call) []string {
	if st := statusTests(in, c.Command); len(st) > 0 || !provenByOutput(in, c) {
		return st
	}
	return []string{testSegments(in, c.Command)[0].Words}
}
