package guard

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A pass of a subset (redteam20 P2-3): `go test -skip TestAdd ./...`,
// `go test -run TestOK ./...` or `go test ./ok/` after TestAdd failed in
// example.com/p2 passes without running what failed. The claim check
// cannot tell "all tests pass" from "the ok tests pass", so a last test
// run that skips tests (-skip: always), or leaves out a test (by -run) or
// a package (its output shows no pass of it) that failed earlier in the
// task or in its own line, backs no claim that tests pass: the report should run them all or say which it ran,
// and the parent decides. A subset run when nothing failed earlier
// (`go test -run TestX ./pkg`) is taken for what it ran: the guard does
// not know the project's whole suite.

var (
	failedTestLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*--- FAIL: (\S+)`)
	})
	failedPkgLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^FAIL\s+(\S+)(\s+\[(build|setup) failed\]|\s+\d[\d.]*s)?\s*$`)
	})
	jsonField = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`"(Action|Package|Test)":"([^"]*)"`)
	})
)

// failures are the go tests (top-level names) and packages the test
// commands before calls[at] reported failing, and calls[at]'s own output
// (`go test ./... ; go test ./ok/` exits 0 with p2's FAIL in it).
func failures(in Input, at int) (tests, pkgs []string) {
	add := func(list *[]string, v string) {
		if v != "" && !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for i, c := range in.Calls[:at+1] {
		if c.Tool != "Bash" || in.wasRefused(c) || !isTest(in, c.Command) || (!c.IsError && i < at && allStatus(in, c.Command)) {
			continue
		}
		for line := range strings.Lines(c.Result) {
			if m := failedTestLine().FindStringSubmatch(line); m != nil {
				name, _, _ := strings.Cut(m[1], "/")
				add(&tests, name)
			}
			if m := failedPkgLine().FindStringSubmatch(strings.TrimRight(line, "\r\n")); m != nil {
				add(&pkgs, m[1])
			}
			if strings.Contains(line, `"Action":"fail"`) {
				f := map[string]string{}
				for _, m := range jsonField().FindAllStringSubmatch(line, -1) {
					f[m[1]] = m[2]
				}
				if name, _, _ := strings.Cut(f["Test"], "/"); name != "" {
					add(&tests, name)
				} else {
					add(&pkgs, f["Package"])
				}
			}
		}
	}
	return tests, pkgs
}

// leftOut says why the test command at calls[at] leaves out a go test or
// package that failed earlier in the task ("" none).
func leftOut(in Input, at int) string {
	last := in.Calls[at]
	judged := judgedTests(in, last)
	for _, sc := range judged {
		if ex := selectionOf(in, sc).except; len(ex) > 0 {
			return fmt.Sprintf("it skips tests (%s)", strings.Join(ex, ", "))
		}
	}
	tests, pkgs := failures(in, at)
	if len(tests) == 0 && len(pkgs) == 0 {
		return ""
	}
	for _, sc := range judged {
		if !strings.HasPrefix(sc, "go test") {
			continue
		}
		run, skip := patterns(strings.Fields(sc))
		if len(tests) > 0 && slices.Contains(selectionOf(in, sc).only, "-short") {
			return fmt.Sprintf("it runs with -short, under which %s may skip itself, and it failed earlier in the task", tests[0])
		}
		if t, ok := otherTags(in, at, sc); ok {
			return fmt.Sprintf("it runs with -tags %q, not the build tags of the go test that failed earlier in the task (-tags %q): it builds another set of files; run it with the same tags", goTags(in, sc), t)
		}
		for _, t := range tests {
			if !selected(run, skip, t) {
				return fmt.Sprintf("it leaves out %s (-run/-skip), which failed earlier in the task", t)
			}
		}
	}
	for _, p := range pkgs {
		if !passed(last.Result, p) {
			return fmt.Sprintf("its output shows no pass of %s, which failed earlier in the task", p)
		}
	}
	return ""
}

// patterns are a go test's -run and -skip values (also -test.run,
// -test.skip after -args), "" when not given.
func patterns(words []string) (run, skip string) {
	for j := 0; j < len(words); j++ {
		name, value, has := strings.Cut(strings.TrimLeft(words[j], "-"), "=")
		name = strings.TrimPrefix(name, "test.")
		if name != "run" && name != "skip" || !strings.HasPrefix(words[j], "-") {
			continue
		}
		if !has && j+1 < len(words) {
			j++
			value = words[j]
		}
		value = strings.Trim(value, `'"`)
		if name == "run" {
			run = value
		} else {
			skip = value
		}
	}
	return run, skip
}

// selected reports whether a go test with these -run and -skip runs the
// whole of the top-level test name (a pattern that does not compile
// selects nothing that can be told).
func selected(run, skip, name string) bool {
	match := func(pat string) (bool, bool) {
		first, rest, _ := strings.Cut(pat, "/")
		re, err := regexp.Compile(first)
		if err != nil {
			return false, false
		}
		return re.MatchString(name), rest != ""
	}
	if run != "" {
		m, deeper := match(run)
		if !m || deeper {
			return false // not run, or only some of its subtests
		}
	}
	if skip != "" {
		if m, _ := match(skip); m {
			return false // skipped, whole or in part
		}
	}
	return true
}

// passed reports go test's output showing pkg pass: its `ok` line (not
// "[no tests to run]"), or a -json pass event of the package.
func passed(out, pkg string) bool {
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "ok" && f[1] == pkg && !strings.Contains(line, "[no tests to run]") {
			return true
		}
		if strings.Contains(line, `"Action":"pass"`) && strings.Contains(line, `"Package":"`+pkg+`"`) && !strings.Contains(line, `"Test":`) {
			return true
		}
	}
	return false
}

// allStatus reports a line whose every foreground test command is a
// status command: its exit 0 proved each passed.
func allStatus(in Input, command string) bool {
	status := statusTests(in, command)
	for _, s := range testSegments(in, command) {
		if !slices.Contains(status, s.Words) {
			return false
		}
	}
	return true
}

// goTags is a go test's -tags value ("" none).
func goTags(in Input, sc string) string {
	for _, o := range selectionOf(in, sc).only {
		if t, ok := strings.CutPrefix(o, "-tags "); ok {
			return strings.Trim(t, `'"`)
		}
	}
	return ""
}

// otherTags finds a go test that failed before calls[at] with build tags
// other than sc's (review evidence3 P2-7), and gives its tags.
func otherTags(in Input, at int, sc string) (string, bool) {
	want := goTags(in, sc)
	for _, c := range in.Calls[:at] {
		if c.Tool != "Bash" || !c.IsError {
			continue
		}
		for _, e := range statusTests(in, c.Command) {
			if strings.HasPrefix(e, "go test") && goTags(in, e) != want {
				return goTags(in, e), true
			}
		}
	}
	return "", false
}
