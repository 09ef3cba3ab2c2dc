package guard

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Fake passes through the real command (review41 P2-1): a test command
// that exited 0 is evidence only when that status is its tests'. Its line
// may undermine it (Input.Undermined: a trap, a function or alias named
// as the program, GOFLAGS=-exec=true, PATH, ...); its own options may run
// no test (a dry run, a listing, a build only) or run them through another
// program (-exec true); and a `go test` whose output says no test ran
// (-run XXX: "[no tests to run]"; a package without tests; its output sent
// elsewhere) backs nothing.

// noRunOption is an option of a test command with which its exit status
// 0 says nothing of its tests, and why.
type noRunOption struct {
	cmd  string   // the test command it belongs to ("" any)
	opts []string // the option as written (a value may follow, or `=value`)
	why  string
}

func noRunOptions() []noRunOption {
	return []noRunOption{
		{"go test", []string{"-exec", "--exec", "-toolexec", "--toolexec"}, "runs the tests through another program, whose exit status it reports"},
		{"go test", []string{"-overlay", "--overlay"}, "replaces source files with others for the run"},
		{"go test", []string{"-modfile", "--modfile"}, "builds with another go.mod, which chooses the modules it builds"},
		{"go test", []string{"-n", "--n"}, "prints the commands without running them"},
		{"go test", []string{"-c", "--c"}, "builds the test binary without running it"},
		{"go test", []string{"-list", "--list", "-test.list"}, "lists tests without running them"},
		{"go test", []string{"-test.run", "-test.skip"}, "selects tests through the binary's own flags"},
		{"go test", profileOptions(), "writes a file (a profile, trace, coverage or test binary) after its tests ran, which may change the files they ran on: run the tests without writing output into the tree"},
		{"cargo test", []string{"--no-run"}, "builds the tests without running them"},
		{"cargo test", []string{"--list"}, "lists tests without running them"},
		{"pytest", []string{"--collect-only", "--co", "--setup-only", "--setup-plan", "--fixtures", "--markers"}, "collects or lists without running tests"},
		{"", []string{"--listTests", "--list-tests"}, "lists tests without running them"},
		{"", []string{"--passWithNoTests"}, "passes with no test at all"},
		{"", []string{"--help", "-h", "--version"}, "prints its help or version"},
		{"", []string{"--ignore-scripts", "--if-present"}, "may run no test script"},
		{"", []string{"--script-shell"}, "runs the test script through another program, whose exit status it reports"},
		{"make", []string{"-i", "--ignore-errors"}, "ignores the recipes' failures"},
		{"make", []string{"-n", "--just-print", "--dry-run", "--recon"}, "prints the recipes without running them"},
		{"make", []string{"-q", "--question"}, "runs no recipe"},
		{"make", []string{"-t", "--touch"}, "touches the targets instead of running their recipes"},
		{"make", []string{"-E", "--eval", "-e", "--environment-overrides"}, "changes the rules or variables its recipes run with"},
	}
}

// profileOptions are go test's options that write a file after (or
// instead of) its tests, in each spelling: -cpuprofile, --cpuprofile,
// -test.cpuprofile after -args (review #5).
func profileOptions() []string {
	var out []string
	for _, o := range []string{"cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "coverprofile", "outputdir", "o"} {
		out = append(out, "-"+o, "--"+o, "-test."+o, "--test."+o)
	}
	return out
}

// makeValued are make's one-letter options that take a value.
const makeValued = "CfIjlLoOW"

// fakedPass says why a test command line that exited 0 is still no
// evidence that tests pass ("" when it is).
func fakedPass(in Input, c Call) string {
	if in.Undermined != nil {
		if why := in.Undermined(c.Command); why != "" {
			return why
		}
	}
	for _, sc := range judgedTests(in, c) {
		words := strings.Fields(sc)
		if why := noRun(sc, words, in.outsideTree); why != "" {
			return why
		}
		if strings.HasPrefix(sc, "go test") {
			if why := notWorkspace(in, c.Command, sc); why != "" {
				return why
			}
			if goEnvWritten(in) {
				return "a call of the task ran go env -w, which changes go's own settings (GOFLAGS, GOWORK…) for every later go test: undo it with go env -u and run the tests again"
			}
		}
		if why := runnerRewritten(in, sc); why != "" {
			return why
		}
		if family(runnerOf(in, sc)) == "pytest" && allSkipped(c.Result) {
			return "every test it ran was skipped (its summary counts no pass): run the tests so that they run"
		}
		if strings.HasPrefix(sc, "go test") && clipped(c.Result) && selects(words) && !ranATest(c.Result) {
			return "it selects tests (-run or -skip) and its output, clipped on its way here, shows none that ran: run it without -x or -v, or with a -run that names the tests"
		}
		if strings.HasPrefix(sc, "go test") && !clipped(c.Result) {
			if why := goTestRanNone(c.Result); why != "" {
				return why
			}
			if selects(words) && goTests(in, c.Command) > 1 {
				return "it selects tests (-run or -skip) in a line that runs go test more than once: its output cannot tell which of them ran a test; run it alone"
			}
			if selects(words) && !ranATest(c.Result) {
				return "it selects tests (-run or -skip) and its output shows none that ran"
			}
			if w := writer(in, c.Command); selects(words) && w != "" {
				return "it selects tests (-run or -skip), and the line's " + w + " could have printed the test lines its output shows"
			}
		}
	}
	return ""
}

// statusTests are the test commands among a line's status commands (all
// of its programs when there is no StatusCommands).
func statusTests(in Input, command string) []string {
	cmds := []string{strings.Join(strings.Fields(command), " ")}
	if in.StatusCommands != nil {
		cmds = in.StatusCommands(command)
	}
	var out []string
	for _, c := range cmds {
		if testPrefix(in, c) {
			out = append(out, c)
		}
	}
	return out
}

// noRun is why one test command's options make its status say nothing of
// its tests ("" none). Everything after `--` or -args goes to the tests'
// own binary, and is looked at too (-test.run, --list).
func noRun(cmd string, words []string, outside func(string) bool) string {
	if strings.HasPrefix(cmd, "make") {
		if why := makeNoRun(words); why != "" {
			return why
		}
	}
	if strings.Contains(cmd, "pytest") {
		for j, w := range words {
			v, ok := strings.CutPrefix(w, "-p")
			if ok && v == "" && j+1 < len(words) {
				v = words[j+1]
			}
			if ok && !strings.HasPrefix(w, "-p=") && v != "" && !strings.HasPrefix(strings.TrimSpace(v), "no:") {
				return "it loads the plugin " + strings.TrimSpace(v) + " (-p), which can change which tests run or what they report"
			}
		}
	}
	outdir := goOption(words, "outputdir")
	for j, w := range words[1:] {
		if w == "-args" || w == "--args" {
			continue
		}
		opt, value, has := strings.Cut(w, "=")
		if !has && j+2 < len(words) {
			value = words[j+2]
		}
		if strings.HasPrefix(cmd, "go test") && slices.Contains([]string{"-count", "--count", "-test.count", "--test.count"}, opt) && strings.Trim(value, `'"`) == "0" {
			return "it ran with " + opt + "=0, which runs no test"
		}
		for _, o := range noRunOptions() {
			if o.cmd != "" && !strings.HasPrefix(cmd, o.cmd) {
				continue
			}
			for _, name := range o.opts {
				if opt == name && !(slices.Contains(profileOptions(), name) && profileOutside(value, outdir, outside)) {
					return "it ran with " + name + ", which " + o.why
				}
			}
		}
	}
	return ""
}

// selects reports a go test that runs only the tests a pattern selects.
func selects(words []string) bool {
	for _, w := range words {
		opt, _, _ := strings.Cut(w, "=")
		switch opt {
		case "-run", "--run", "-skip", "--skip":
			return true
		}
	}
	return false
}

// goTestRanNone says why a go test run's output shows that no test ran
// ("" when one did, or when the output, cut short, cannot tell): it is
// empty (sent elsewhere), or it says "no tests to run" or "no test files"
// and shows no test passing.
func goTestRanNone(out string) string {
	if ranATest(out) {
		return ""
	}
	t := strings.TrimSpace(out)
	switch {
	case t == "" || strings.HasPrefix(t, "(no output"):
		return "its output shows no test result (sent elsewhere?): run it with its output shown"
	case strings.Contains(t, "no tests to run"):
		return "its output says it ran no test (no tests to run: -run or -skip matched none)"
	case strings.Contains(t, "[no test files]"):
		return "its output says there were no tests to run (no test files)"
	}
	return ""
}

// textWriters are programs that print what they are given or read: in a
// line with a go test -run, its "--- PASS" lines could be theirs.
func textWriters() []string {
	return []string{"echo", "printf", "cat", "tac", "tee", "head", "tail", "sed", "awk", "perl", "python", "python3",
		"node", "ruby", "sh", "bash", "xargs", "grep", "rev", "yes", "dd", "cp", "install"}
}

// writer is the first program of a line that could print a test's lines
// ("" none).
func writer(in Input, command string) string {
	progs := []string{}
	if in.Programs != nil {
		progs = in.Programs(command)
	} else if in.StatusCommands != nil {
		progs = in.StatusCommands(command)
	}
	for _, p := range progs {
		if f := strings.Fields(p); len(f) > 0 && slices.Contains(textWriters(), filepath.Base(f[0])) {
			return f[0]
		}
	}
	return ""
}

// clipped reports an output cut in its middle on its way here (the tool's
// "bytes cut from the middle", the record's "bytes left out"): what ran
// may be in the part left out, so whether a test ran cannot be told.
func clipped(out string) bool {
	return clipMarker().MatchString(out)
}

var clipMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\.\.\. \[\d+ bytes cut from the middle;|… \(\d+ bytes left out\) …`)
})

// ranATest reports whether go test's output shows a test that ran: a
// package's `ok` line without "[no tests to run]", a `--- PASS`, or a
// -json pass event of a test.
func ranATest(out string) bool {
	for line := range strings.Lines(out) {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "--- PASS"):
			return true
		case strings.HasPrefix(t, "ok ") || strings.HasPrefix(t, "ok\t"):
			if !strings.Contains(t, "[no tests to run]") {
				return true
			}
		case strings.Contains(t, `"Action":"pass"`) && strings.Contains(t, `"Test":`):
			return true
		}
	}
	return false
}

// verbosity reports a make variable assignment that only asks for more
// output: V or VERBOSE set to a number (make test V=1). Any other
// variable, or another value, can name a program or an option
// (GO=true, TESTFLAGS=-run=NONE, COUNT=0 for a -count=$(COUNT)), which
// the command line's value puts in place of the Makefile's.
func verbosity(name, value string) bool {
	return (name == "V" || name == "VERBOSE") && value != "" && isDigits(value)
}

// makeNoRun is why a make command's words make its status say nothing of
// its recipes ("" none): a cluster of one-letter options holding i, n, q
// or t (-in, -ki), or a variable assigned on its command line (SHELL=true,
// .SHELLFLAGS=..., GO=true), which beats the Makefile's own and can change
// what its recipes run.
func makeNoRun(words []string) string {
	for _, w := range words[1:] {
		if w == "--" {
			break
		}
		if k, v, ok := strings.Cut(w, "="); ok && !strings.HasPrefix(w, "-") && !verbosity(k, v) {
			return "it sets the make variable " + k + " on its command line, which overrides the Makefile's and can change what its recipes run (only V or VERBOSE set to a number is taken): run make without it"
		}
		if !strings.HasPrefix(w, "-") || strings.HasPrefix(w, "--") {
			continue
		}
		for _, r := range w[1:] {
			if strings.ContainsRune(makeValued, r) {
				break
			}
			if why, ok := makeLetters()[r]; ok {
				opt := fmt.Sprintf("-%c", r)
				if w != opt {
					opt += " (in " + w + ")"
				}
				return "it ran with " + opt + ", which " + why
			}
		}
	}
	return ""
}

// goTests counts the go test commands of a line (its status commands').
func goTests(in Input, command string) int {
	n := 0
	for _, sc := range statusTests(in, command) {
		if strings.HasPrefix(sc, "go test") {
			n++
		}
	}
	return n
}

// makeLetters are make's one-letter options with which its status says
// nothing of its recipes.
func makeLetters() map[rune]string {
	return map[rune]string{'i': "ignores the recipes' failures", 'n': "prints the recipes without running them",
		'q': "runs no recipe", 't': "touches the targets instead of running their recipes", 'e': "lets the environment override the Makefile's variables"}
}

// goOption is the value of go test's -name (or --name, -test.name) in
// words, "" when not given.
func goOption(words []string, name string) string {
	for j, w := range words {
		opt, value, has := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !strings.HasPrefix(w, "-") || strings.TrimPrefix(opt, "test.") != name {
			continue
		}
		if !has && j+1 < len(words) {
			value = words[j+1]
		}
		return strings.Trim(value, `'"`)
	}
	return ""
}

// profileOutside reports a file a go test writes after its tests (a
// profile, a trace, -o's binary; relative ones in -outputdir) that lies
// outside the workspace: no change to the files the tests ran on.
func profileOutside(value, outdir string, outside func(string) bool) bool {
	p := strings.Trim(value, `'"`)
	if p != "" && !filepath.IsAbs(p) && outdir != "" {
		p = filepath.Join(outdir, p)
	}
	return outside(p)
}

var goEnvWrite = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bgo\s+env\s+(\S+\s+)*-{1,2}w\b`)
})

// goEnvWritten reports a Bash call of the task that ran go env -w (which
// writes go's settings file, outside the tree).
func goEnvWritten(in Input) bool {
	for _, c := range in.Calls {
		if c.Tool == "Bash" && goEnvWrite().MatchString(c.Command) {
			return true
		}
	}
	return false
}

var pytestCount = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b\d+ (passed|skipped|failed|errors?|xfailed|xpassed|deselected)\b`)
})

// allSkipped reports a pytest output whose last summary line counts skips
// and no pass ("4 skipped in 0.01s").
func allSkipped(out string) bool {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		counts := pytestCount().FindAllStringSubmatch(lines[i], -1)
		if len(counts) == 0 || !strings.Contains(lines[i], " in ") {
			continue
		}
		passed, skipped := false, false
		for _, m := range counts {
			passed = passed || m[1] == "passed" || m[1] == "xpassed"
			skipped = skipped || m[1] == "skipped"
		}
		return skipped && !passed
	}
	return false
}
