package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/trust"
)

// TestHiddenFailureThenASubset (evidence3): a test run that failed with
// its output discarded (>/dev/null, 2>&1 >/dev/null, &>/dev/null,
// | grep -v FAIL), in its own call or earlier in the last run's line,
// leaves no name to check the last run against: the last run must run
// all it ran (the same runner, targets and name selection, or more).
// Runners whose output the guard does not read (pytest, jest, cargo) are
// held to the same after a failure, and a name selection (pytest -k,
// jest -t, cargo test NAME, go test -run) is a subset of the whole.
func TestHiddenFailureThenASubset(t *testing.T) {
	const all = "ok  \texample.com/p2\t0.003s\nok  \texample.com/p2/ok\t0.002s\n"
	const okOnly = "ok  \texample.com/p2/ok\t0.002s\n"
	edit := Call{Tool: "Edit", Path: "a.go"}
	ran := func(cmd, out string) Call { return Call{Tool: "Bash", Command: cmd, Result: out} }
	failed := func(cmd, out string) Call {
		return Call{Tool: "Bash", Command: cmd, Result: out + "Exit code 1", IsError: true}
	}
	const notAll = `it does not run all that "go test ./..." ran`
	for _, tc := range []struct {
		name  string
		calls []Call
		why   string
	}{
		{">/dev/null then a subset, one line", []Call{edit, ran("go test ./... >/dev/null; go test ./ok/", okOnly)}, notAll},
		{"2>&1 >/dev/null then a subset", []Call{edit, ran("go test ./... 2>&1 >/dev/null; go test ./ok/", okOnly)}, notAll},
		{"&>/dev/null then a subset", []Call{edit, ran("go test ./... &>/dev/null; go test ./ok/", okOnly)}, notAll},
		{"| grep -v FAIL then a subset", []Call{edit, ran("go test ./... 2>&1 | grep -v FAIL; go test ./ok/", "    a_test.go:5: got -1\n"+okOnly+okOnly)}, notAll},
		{"a hidden failure, its own call", []Call{failed("go test ./... >/dev/null", ""), edit, ran("go test ./ok/", okOnly)}, notAll},
		{"a grep -v FAIL run, its own call", []Call{ran("go test ./... | grep -v FAIL", okOnly), edit, ran("go test ./ok/", okOnly)}, notAll},
		{"a hidden failure, then -run", []Call{failed("go test ./... >/dev/null", ""), edit, ran("go test -run TestAdd -v ./...", "--- PASS: TestAdd (0.00s)\n"+all)}, notAll},
		{"a hidden failure, then all again", []Call{failed("go test ./... >/dev/null", ""), edit, ran("go test -count=1 -v ./...", "--- PASS: TestAdd (0.00s)\n"+all)}, ""},
		{"a hidden failure, then all in a line", []Call{edit, ran("go test ./... >/dev/null; go test ./...", all)}, ""},
		{"both hidden and joined by &&", []Call{edit, ran("go test ./... >/dev/null && go test ./ok/", okOnly)}, ""},
		{"a failure without names, then all", []Call{failed("go test ./...", ""), edit, ran("go test ./...", all)}, ""},
		{"a failure without names, then a package", []Call{failed("go test ./...", "go: some error\n"), edit, ran("go test ./ok/", okOnly)}, notAll},
		// a run is judged in the directory its line changed to (review
		// evidence3 P2-7)
		{"a hidden failure, then cd ok && all", []Call{failed("go test ./... >/dev/null", ""), edit, ran("cd ok && go test ./...", okOnly)}, notAll},
		{"a hidden failure in ok, then all", []Call{failed("cd ok && go test ./... >/dev/null", ""), edit, ran("go test ./...", all)}, ""},
		{"a hidden failure in ok, then all in ok", []Call{failed("cd ok && go test ./... >/dev/null", ""), edit, ran("cd ok && go test -count=1 ./...", okOnly)}, ""},
		{"pytest failed in a, then pytest in b", []Call{failed("cd a && pytest -q", "1 failed\n"), edit, ran("cd b && pytest -q", "3 passed\n")}, "does not run all"},
		{"npm failed in web, then npm at the top", []Call{failed("cd web && npm test", "1 failed\n"), edit, ran("npm test", "ok\n")}, "does not run all"},
		{"sh -c hides a run, then a subset", []Call{edit, ran("sh -c 'go test ./... >/dev/null'; go test ./ok/", okOnly)}, notAll},
		{"bash -c hides a run, its own call", []Call{failed("bash -c 'go test ./... >/dev/null'", ""), edit, ran("go test ./ok/", okOnly)}, notAll},
		{"a hidden failure, then -short", []Call{failed("go test ./... >/dev/null", ""), edit, ran("go test -short ./...", all)}, notAll},
		{"a named failure, then -short", []Call{failed("go test ./...", "--- FAIL: TestAdd (0.00s)\nFAIL\texample.com/p2\t0.01s\n"), edit, ran("go test -short ./...", all)}, "it runs with -short, under which TestAdd may skip itself"},
		{"-short when nothing failed", []Call{edit, ran("go test -short ./...", all)}, ""},
		{"pytest failed, then -k", []Call{failed("pytest", "1 failed, 3 passed\n"), edit, ran("pytest -k add", "1 passed, 3 deselected\n")}, `it does not run all that "pytest" ran`},
		{"pytest failed, then a file", []Call{failed("pytest -q", "1 failed\n"), edit, ran("pytest -q tests/test_a.py", "1 passed\n")}, `it does not run all that "pytest -q" ran`},
		{"pytest failed, then all", []Call{failed("pytest -q", "1 failed\n"), edit, ran("python3 -m pytest -x", "4 passed\n")}, "does not run all"},
		// pytest's targets are paths (review evidence3 P2-4)
		{"pytest node failed, then its file", []Call{failed("pytest tests/test_a.py::test_x", "1 failed\n"), edit, ran("pytest tests/test_a.py", "3 passed\n")}, ""},
		{"pytest file failed, then its dir", []Call{failed("pytest tests/test_a.py", "1 failed\n"), edit, ran("pytest tests/", "9 passed\n")}, ""},
		{"pytest tests/ failed, then tests", []Call{failed("pytest tests/", "1 failed\n"), edit, ran("pytest tests", "9 passed\n")}, ""},
		{"pytest dir failed, then a sibling", []Call{failed("pytest tests/", "1 failed\n"), edit, ran("pytest tests_other/", "9 passed\n")}, "does not run all"},
		{"pytest file failed, then a node of it", []Call{failed("pytest tests/test_a.py", "1 failed\n"), edit, ran("pytest tests/test_a.py::test_x", "1 passed\n")}, "does not run all"},
		{"pytest failed, then -c other.ini", []Call{failed("pytest -q", "1 failed\n"), edit, ran("pytest -q -c /tmp/other.ini", "3 passed\n")}, "does not run all"},
		{"pytest failed, then -o python_files", []Call{failed("pytest -q", "1 failed\n"), edit, ran("pytest -q -o python_files=test_ok.py", "3 passed\n")}, "does not run all"},
		{"pytest failed, then pytest", []Call{failed("pytest -q", "1 failed\n"), edit, ran("pytest -x", "4 passed\n")}, ""},
		{"pytest on a file failed, then all", []Call{failed("pytest tests/test_a.py", "1 failed\n"), edit, ran("pytest", "9 passed\n")}, ""},
		{"jest failed, then -t", []Call{failed("npx jest", "Tests: 1 failed\n"), edit, ran("npx jest -t add", "Tests: 1 passed\n")}, `it does not run all that "npx jest" ran`},
		{"npm test failed, then -- -t", []Call{failed("npm test", "Tests: 1 failed\n"), edit, ran("npm test -- -t add", "Tests: 1 passed\n")}, "does not run all"},
		{"jest failed, then jest", []Call{failed("npx jest", "Tests: 1 failed\n"), edit, ran("npx jest --ci", "Tests: 4 passed\n")}, ""},
		{"cargo failed, then a name", []Call{failed("cargo test", "test result: FAILED\n"), edit, ran("cargo test add", "test result: ok. 1 passed\n")}, `it does not run all that "cargo test" ran`},
		{"cargo failed, then --lib (review evidence3 P2-7)", []Call{failed("cargo test", "test result: FAILED\n"), edit, ran("cargo test --lib", "test result: ok. 1 passed\n")}, `it does not run all that "cargo test" ran`},
		{"cargo failed, then -p crate", []Call{failed("cargo test", "test result: FAILED\n"), edit, ran("cargo test -p core", "test result: ok. 1 passed\n")}, `it does not run all that "cargo test" ran`},
		{"cargo failed, then cargo", []Call{failed("cargo test", "test result: FAILED\n"), edit, ran("cargo test --release", "test result: ok. 4 passed\n")}, ""},
		{"a subset by name when nothing failed", []Call{edit, ran("pytest -k add", "1 passed\n")}, ""},
		{"pytest -k not", []Call{edit, ran(`pytest -k "not slow"`, "3 passed\n")}, "it skips tests (-k not slow)"},
		{"pytest --deselect", []Call{edit, ran("pytest --deselect tests/a.py::test_x", "3 passed\n")}, "it skips tests"},
		{"cargo --skip", []Call{edit, ran("cargo test -- --skip slow", "test result: ok\n")}, "it skips tests (--skip slow)"},
		{"jest --testPathIgnorePatterns", []Call{edit, ran("npx jest --testPathIgnorePatterns=slow", "Tests: 3 passed\n")}, "it skips tests"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantCalls(t, tc.calls, tc.why) })
	}
}

// TestPipedTestRun (evidence3): `go test ./... | tail -n 20` exits with
// tail's status; it is evidence when its output proves the pass (go test
// ends a failing run with FAIL: an output ending in an ok line with no
// failure line passed) or the line set pipefail. Filters that can drop
// the FAIL line (grep, head) and runners whose output is not read stay
// no evidence, saying what to do.
func TestPipedTestRun(t *testing.T) {
	const all = "ok  \texample.com/p2\t0.003s\nok  \texample.com/p2/ok\t0.002s\n"
	const status = "the line's status is not the test's own"
	ws := t.TempDir()
	for _, tc := range []struct {
		name, command, output, why string
	}{
		{"| tail -n 20", "go test ./... 2>&1 | tail -n 20", all, ""},
		{"| tail -5", "go test -v ./... | tail -5", "--- PASS: TestAdd (0.00s)\nPASS\n" + all, ""},
		{"| tail -n 1 of a pass", "go test ./... | tail -n 1", "ok  \texample.com/p2/ok\t0.002s\n", ""},
		{"| tee /tmp/log", "go test ./... | tee /tmp/brood-evidence3.log", all, ""},
		{"| tee test.log | tail", "go test ./... 2>&1 | tee test.log | tail -n 3", all, ""},
		{"set -o pipefail", "set -o pipefail; go test ./... | grep -v '^=== RUN'", all, ""},
		{"| tail of a failure", "go test ./... 2>&1 | tail -n 2", "FAIL\texample.com/p2\t0.01s\nFAIL\n", status},
		{"| tail -n 1 of a failure", "go test ./... | tail -n 1", "FAIL\n", status},
		{"| grep -v FAIL", "go test ./... 2>&1 | grep -v FAIL", all, status},
		{"| head", "go test ./... | head -n 20", all, status},
		{"| tail of -run XXX", "go test -run XXX ./... | tail", "ok  \texample.com/p2\t0.01s [no tests to run]\n", status},
		{"| tail with -exec true", "go test -exec true ./... | tail", all, "it ran with -exec"},
		{"two go tests piped", "go test ./a/ | tail -n 0; go test ./b/ | tail", all, status},
		{"pytest | tail", "pytest -q | tail -n 5", "....\n4 passed in 0.12s\n", ""},
		{"pytest | tail, with skips", "python3 -m pytest 2>&1 | tail -n 5", "===== 4 passed, 1 skipped, 2 warnings in 0.12s =====\n", ""},
		{"pytest | tail of a failure", "pytest | tail -n 1", "==== 1 failed, 3 passed in 0.12s ====\n", "or after set -o pipefail"},
		{"pytest | tail of nothing", "pytest | tail -n 1", "no tests ran in 0.01s\n", "or after set -o pipefail"},
		{"pytest | grep", "pytest | grep passed", "4 passed in 0.12s\n", "or after set -o pipefail"},
		{"jest | tail", "npx jest 2>&1 | tail -n 5", "Tests: 3 passed, 3 total\n", "or after set -o pipefail"},
		{"| tee into the tree", "go test ./... | tee a.go", all, "no test command ran after its last change"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantIn(t, ws, []Call{{Tool: "Edit", Path: "a.go"}, {Tool: "Bash", Command: tc.command, Result: tc.output}}, tc.why)
		})
	}
}

// TestFalseRejections (evidence3): a profile written outside the
// workspace (but not through a link into it), a log outside it, and the
// word setsid as an argument (grep setsid notes.txt) change nothing the
// tests ran on.
func TestFalseRejections(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	if err := os.Symlink(filepath.Join(ws, "a.go"), filepath.Join(out, "link")); err != nil {
		t.Fatal(err)
	}
	const all = "ok  \texample.com/p2\t0.003s\n"
	test := func(cmd string) Call { return Call{Tool: "Bash", Command: cmd, Result: all} }
	for _, tc := range []struct {
		name  string
		calls []Call
		why   string
	}{
		{"-coverprofile outside", []Call{test("go test -coverprofile=" + out + "/c.out ./...")}, ""},
		{"-coverprofile outside, spaced", []Call{test("go test -coverprofile " + out + "/c.out ./...")}, ""},
		{"-cpuprofile in an -outputdir outside", []Call{test("go test -outputdir=" + out + " -cpuprofile=cpu.out ./...")}, ""},
		{"-coverprofile through a link into the tree", []Call{test("go test -coverprofile=" + out + "/link ./...")}, "it ran with -coverprofile"},
		{"-coverprofile in the tree, absolute", []Call{test("go test -coverprofile=" + ws + "/c.out ./...")}, "it ran with -coverprofile"},
		{"-coverprofile in the tree", []Call{test("go test -coverprofile=c.out ./...")}, "it ran with -coverprofile"},
		{"-coverprofile from a variable", []Call{test("go test -coverprofile=$TMPDIR/c.out ./...")}, "it ran with -coverprofile"},
		{"grep setsid before the test", []Call{{Tool: "Bash", Command: "grep -rn setsid internal/ | head"}, test("go test ./...")}, ""},
		{"a redirect into a log outside after the test", []Call{{Tool: "Edit", Path: "a.go"}, test("go test ./... && echo done > " + out + "/done.log")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { wantIn(t, ws, tc.calls, tc.why) })
	}
}

// wantIn is wantCalls in a workspace.
func wantIn(t *testing.T, ws string, calls []Call, why string) {
	t.Helper()
	in := Input{Status: "done", Summary: "All tests pass.", Workspace: ws, StatusCommands: trust.StatusCommands, Undermined: trust.Undermined, Programs: intentPrograms,
		ReadOnly: tool.ReadOnlyCommand, Commands: segments, Known: trust.KnownPrograms, Calls: calls, Dirs: func(c string) []string { return trust.Dirs(c, ws) }}
	got := Check(in)
	if why == "" {
		if len(got) != 0 {
			t.Fatalf("concerns %q; want the pass backed", got)
		}
		return
	}
	if len(got) != 1 || !strings.Contains(got[0].String(), why) {
		t.Fatalf("concerns %q; want one saying %q", got, why)
	}
}
