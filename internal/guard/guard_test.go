package guard

import (
	"strings"
	"testing"
)

const fullReport = "## What I did\nRan it.\n## What I found\nok\n## Files changed\nnone\n## Problems\nnone\n"

func TestCheck(t *testing.T) {
	goTest := func(cmd string) []string { return []string{strings.Join(strings.Fields(cmd)[:2], " ")} }
	tests := []struct {
		name string
		in   Input
		want []string // substrings of the concerns, in order; nil means none
	}{
		{name: "clean report", in: Input{Status: "done", Summary: fullReport, Sections: DefaultSections()}},
		{name: "empty summary", in: Input{Status: "done", Summary: "  ", Sections: DefaultSections()}, want: []string{"shape: the child reported done with an empty summary"}},
		{name: "missing sections", in: Input{Status: "done", Summary: "## What I did\nstuff\n", Sections: DefaultSections()}, want: []string{"shape: the report lacks the section(s) it was asked for: What I found, Files changed, Problems"}},
		{name: "bold headings count", in: Input{Status: "done", Summary: "**What I did:** x\n**What I found:** y\n**Files changed:** none\n**Problems:** none", Sections: DefaultSections()}},
		{name: "failed is not judged for shape", in: Input{Status: "failed", Summary: "", Sections: DefaultSections()}},
		{name: "outside scope", in: Input{Status: "done", Summary: fullReport, Changed: []string{"src/a.go", "README.md"}, WriteScope: []string{"src/**"}}, want: []string{"scope: changed README.md outside what it may write (src/**)"}},
		{name: "inside scope", in: Input{Status: "done", Summary: fullReport, Changed: []string{"src/a/b.go"}, WriteScope: []string{"src/**"}}},
		{name: "tests claimed not run", in: Input{Status: "done", Summary: "All tests pass now."}, want: []string{"evidence: the report says tests pass, but the child ran no test command"}},
		{name: "tests claimed and run", in: Input{Status: "done", Summary: "All tests pass now.", Calls: []Call{{Tool: "Bash", Command: "go test -count=1 ./..."}}, Programs: goTest}},
		{name: "tests run through cd", in: Input{Status: "done", Summary: "The test suite is green.", Calls: []Call{{Tool: "Bash", Command: "cd x && go test ./..."}}, Programs: func(string) []string { return []string{"go test"} }}},
		{name: "negated claim", in: Input{Status: "done", Summary: "The tests do not pass yet."}},
		{name: "edit claimed not made", in: Input{Status: "done", Summary: "I updated `src/auth.go` to check the token."}, want: []string{"evidence: the report says it changed src/auth.go, but no edit touched it"}},
		{name: "edit claimed and made", in: Input{Status: "done", Summary: "I updated src/auth.go.", Workspace: "/w", Calls: []Call{{Tool: "Edit", Path: "/w/src/auth.go"}}}},
		{name: "edit claimed and in the diff", in: Input{Status: "done", Summary: "Created docs/x.md.", Changed: []string{"docs/x.md"}, Observed: true}},
		{name: "denied call listed", in: Input{Status: "done", Summary: fullReport, Calls: []Call{{Tool: "Bash", Command: "mkdir d25", IsError: true, Result: "permission denied: Bash \"mkdir d25\" needs approval ..."}}}, want: []string{`unauthorized: Bash "mkdir d25" was refused: permission denied`}},
		{name: "refused delegation listed", in: Input{Status: "done", Summary: fullReport, Calls: []Call{{Tool: "Task", IsError: true, Result: "delegation refused: this agent is at depth 1"}}}, want: []string{"unauthorized: Task was refused: delegation refused"}},
		{name: "plain tool errors are not attempts", in: Input{Status: "done", Summary: fullReport, Calls: []Call{{Tool: "Bash", Command: "false", IsError: true, Result: "exit status 1"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check(tt.in)
			if len(got) != len(tt.want) {
				t.Fatalf("Check = %q, want %d concern(s) %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("concern %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}
