package guard

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/trust"
)

// TestTestStatusIsTheTests: a test command that exited 0 backs "tests pass"
// only when the line's exit status is the test's own: a pipeline's status
// is its last command's, a list's its last statement's, `||` hides a
// failure (the red team's `go test ./... 2>&1 | tail -5`, whose tests
// failed, was taken for a pass).
func TestTestStatusIsTheTests(t *testing.T) {
	for _, tc := range []struct {
		command string
		backed  bool
	}{
		{"go test ./...", true},
		{"cd x && go test ./...", true},
		{"go test ./... && echo ok", true},
		{"timeout 300 go test -count=1 ./...", true},
		{"GOFLAGS=-mod=mod go test ./...", true},
		{"(cd x && go test ./...)", true},
		{"go vet ./...; go test ./...", true},
		{"time go test ./...", true},
		{"cat list | go test ./...", true},
		{"go test ./... 2>&1 | tail -5", false},
		{"go test ./... | cat", false},
		{"go test ./... || true", false},
		{"go test ./...; echo done", false},
		{"! go test ./...", false},
		{"go test ./... &", false},
		{"if go test ./...; then echo y; fi", false},
		{"false || go test ./...", false},
		{"{ go test ./...; echo $?; }", false},
	} {
		in := Input{Status: "done", Summary: "All tests pass.", StatusCommands: trust.StatusCommands,
			Calls:    []Call{{Tool: "Bash", Command: tc.command, Result: "ok  \tx\t0.1s\n"}},
			Programs: func(string) []string { return []string{"go test"} }}
		got := Check(in)
		if tc.backed && len(got) != 0 {
			t.Errorf("%q: concerns %q; want the pass backed", tc.command, got)
		}
		if !tc.backed && (len(got) != 1 || !strings.Contains(got[0].String(), "the line's status is not the test's own")) {
			t.Errorf("%q: concerns %q; want the test's result said unknown", tc.command, got)
		}
	}
}
