package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/trust"
)

// TestRewrittenRunner (evidence3): a pass through a runner whose
// definition the child changed (a Makefile's recipe, package.json's
// script, .npmrc, a conftest hook, pytest's addopts, go.work, a replace
// by a directory) is evidence only if that definition is itself a test
// run brood would take; a file the child did not change is not judged.
func TestRewrittenRunner(t *testing.T) {
	for _, tc := range []struct {
		name, file, body, command, why string
		edited                         bool // an Edit of it, no diff
	}{
		{"a Makefile that runs go test", "Makefile", "test:\n\t@go test ./...\n", "make test", "", false},
		{"a Makefile with prerequisites and echo", "Makefile", "GO ?= go\nbuild:\n\tgo build ./...\ntest: build\n\techo testing\n\tgo test -race ./...\n", "make -j2 test", "", false},
		{"a Makefile test made true", "Makefile", "test:\n\ttrue\n", "make test", "it changed Makefile, whose test recipe runs no test command", false},
		{"an edited Makefile test made exit 0", "Makefile", "test:\n\t@exit 0\n", "make test", "whose test recipe runs exit 0, which is neither a test run nor read-only", true},
		{"a recipe that ignores its failure", "Makefile", "test:\n\t-go test ./...\n", "make test", "ignores a failure", false},
		{"a recipe that hides its status", "Makefile", "test:\n\tgo test ./... || true\n", "make test", "does not end with the test's own status", false},
		{"a recipe from variables", "Makefile", "GO = go\ntest:\n\t$(GO) test ./...\n", "make test", "takes words from make variables", false},
		{"a recipe's flags from variables", "Makefile", "F = -run NONE\ntest:\n\tgo test $(F) ./...\n", "make test", "from make variables", false},
		{"SHELL", "Makefile", "SHELL = /bin/true\ntest:\n\tgo test ./...\n", "make test", "which now holds SHELL = /bin/true", false},
		{".ONESHELL", "Makefile", ".ONESHELL:\ntest:\n\texit 0\n\tgo test ./...\n", "make test", "which now holds .ONESHELL:", false},
		{"an exported GOFLAGS", "Makefile", "export GOFLAGS = -exec=true\ntest:\n\tgo test ./...\n", "make test", "it sets GOFLAGS", false},
		{"a later recipe replaces the test", "Makefile", "test:\n\tgo test ./...\ntest:\n\ttrue\n", "make test", "whose test recipe runs no test command", false},
		{"an inline recipe replaces the test", "Makefile", "test:\n\tgo test ./...\ntest: ; true\n", "make test", "whose test recipe runs no test command", false},
		{"prerequisites alone keep the recipe", "Makefile", "test:\n\tgo test ./...\ntest: build\nbuild:\n\tgo build ./...\n", "make test", "", false},
		{"a continued line that hides the status", "Makefile", "test:\n\tgo test ./... \\\n\t  || true\n", "make test", "does not end with the test's own status", false},
		// every line of the recipe and its prerequisites' is a test run or
		// read-only; what make runs reading the file is a directive (review
		// evidence3 P1-2)
		{"lines that rewrite the tests around the run", "Makefile", "test:\n\tsed -i 's/t.Fatal/t.Log/' p2/p2_test.go\n\tgo test ./...\n\tgit checkout p2/p2_test.go\n", "make test", "whose test recipe runs sed -i", false},
		{"a prerequisite that rewrites the tests", "Makefile", "test: prep\n\tgo test ./...\nprep:\n\tsed -i s/Fatal/Log/ a_test.go\n", "make test", "whose test recipe runs sed -i", false},
		{"a target-specific exported variable", "Makefile", "test: export GOFLAGS=-skip=TestAdd\ntest:\n\tgo test ./...\n", "make test", "which now holds test: export GOFLAGS=-skip=TestAdd", false},
		{"a target-specific variable", "Makefile", "test: GOFLAGS=-skip=TestAdd\ntest:\n\tgo test ./...\n", "make test", "which now holds test: GOFLAGS", false},
		{"$(shell) when make reads the file", "Makefile", "X := $(shell sed -i 's/t.Fatal/t.Log/' p2/p2_test.go)\ntest:\n\tgo test ./...\n", "make test", "which now holds X := $(shell", false},
		{"a != assignment", "Makefile", "X != sed -i s/a/b/ a_test.go\ntest:\n\tgo test ./...\n", "make test", "which now holds X !=", false},
		{"include", "Makefile", "include rules.inc\ntest:\n\tgo test ./...\n", "make test", "which now holds include rules.inc", false},
		{"a true after the test", "Makefile", "test:\n\tgo test ./...\n\ttrue\n", "make test", "", false},
		{"go test; exit 0", "Makefile", "test:\n\tgo test ./... ; exit 0\n", "make test", "does not end with the test's own status", false},
		{"a conditional", "Makefile", "ifeq ($(CI),)\ntest:\n\tgo test ./...\nelse\ntest:\n\ttrue\nendif\n", "make test", "which now holds ifeq ($(CI),)", false},
		{"eval", "Makefile", "$(eval $(shell cat x))\ntest:\n\tgo test ./...\n", "make test", "which now holds $(eval", false},
		{"a GNUmakefile", "GNUmakefile", "test:\n\ttrue\n", "make test", "it changed GNUmakefile, whose test recipe", false},
		{"a duplicate scripts key", "package.json", `{"scripts": {"test": "jest"}, "scripts": {"test": "exit 0"}}`, "npm test", "whose test script (exit 0)", false},
		{"a .mk file", "tests.mk", "test:\n\ttrue\n", "make test", "it changed tests.mk", false},
		{"a package.json test script", "package.json", `{"scripts": {"test": "jest --ci"}}`, "npm test", "", false},
		{"a package.json test made exit 0", "package.json", `{"name": "x", "scripts": {"build": "tsc", "test": "exit 0"}}`, "npm test", "whose test script (exit 0) runs no test command", false},
		{"a package.json test with --passWithNoTests", "package.json", `{"scripts": {"test": "jest --passWithNoTests"}}`, "yarn test", "--passWithNoTests", false},
		{"npm run test:unit", "package.json", `{"scripts": {"test:unit": "vitest run"}}`, "npm run test:unit", "", false},
		{"npm run test:unit made echo", "package.json", `{"scripts": {"test:unit": "echo ok"}}`, "npm run test:unit", "whose test:unit script (echo ok) runs no test command", false},
		{"npx jest with package.json changed", "package.json", `{"scripts": {"test": "exit 0"}}`, "npx jest", "", false},
		{".npmrc", ".npmrc", "script-shell=/bin/true\n", "npm test", "it changed .npmrc", false},
		{"a conftest with a fixture", "tests/conftest.py", "import pytest\n\n@pytest.fixture\ndef db():\n    return 1\n", "pytest -q", "", false},
		{"a conftest that deselects", "conftest.py", "def pytest_collection_modifyitems(config, items):\n    items.clear()\n", "pytest -q", "which now uses pytest_collection_modifyitems", false},
		{"a conftest that rewrites the exit status", "conftest.py", "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n", "python3 -m pytest", "which now uses pytest_sessionfinish", false},
		{"pytest.ini addopts -q", "pytest.ini", "[pytest]\naddopts = -q -x\n", "pytest", "", false},
		{"pytest.ini addopts --collect-only", "pytest.ini", "[pytest]\naddopts = --collect-only\n", "pytest", "whose addopts ran with --collect-only", false},
		{"pyproject addopts -k", "pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-k add\"\n", "pytest", "whose addopts select tests (-k add)", false},
		{"pytest.ini python_files (review evidence3 P2-9)", "pytest.ini", "[pytest]\npython_files = test_ok.py\n", "pytest", "whose python_files chooses which files", false},
		{"pytest.ini testpaths", "pytest.ini", "[pytest]\ntestpaths = tests/ok\n", "pytest", "whose testpaths chooses", false},
		{"go.work", "go.work", "go 1.26\nuse ./fake\n", "go test ./...", "it changed go.work", false},
		{"go.mod replaced by a directory", "go.mod", "module example.com/x\n\nreplace example.com/y => ./fake\n", "go test ./...", "replaces a module with the directory ./fake", false},
		{"go.mod with a new requirement", "go.mod", "module example.com/x\n\nrequire example.com/y v1.2.0\n", "go test ./...", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, tc.file)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, tc.file), []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			out := "ok  \texample.com/x\t0.1s\n"
			calls := []Call{{Tool: "Bash", Command: tc.command, Result: out}}
			in := Input{Status: "done", Summary: "All tests pass.", Workspace: ws, StatusCommands: trust.StatusCommands, Undermined: trust.Undermined, Programs: intentPrograms,
				ReadOnly: tool.ReadOnlyCommand, Commands: segments, Known: trust.KnownPrograms, Calls: calls, Changed: []string{tc.file}, Observed: true,
				TestCommands: append(DefaultTestCommands(), "npm run test:unit")}
			if tc.edited {
				in.Changed, in.Observed = nil, false
				in.Calls = append([]Call{{Tool: "Edit", Path: filepath.Join(ws, tc.file)}}, calls...)
			}
			got := Check(in)
			if tc.why == "" {
				if len(got) != 0 {
					t.Fatalf("concerns %q; want the pass backed", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0].String(), tc.why) || !strings.Contains(got[0].String(), "no evidence that tests pass") {
				t.Fatalf("concerns %q; want one saying %q", got, tc.why)
			}
			// The same file, not the child's change, is not judged.
			in.Changed, in.Observed, in.Calls = nil, true, calls
			if got := Check(in); len(got) != 0 {
				t.Fatalf("an unchanged %s was judged: %q", tc.file, got)
			}
		})
	}
}
