package e2e_test

import (
	"strings"
	"testing"
)

// TestEvidenceThroughTheRealCommand (evidence3): the test-evidence
// guardrail's remaining fake passes and false rejections, through brood
// subagent and the child's real Bash tool: a failing run whose output is
// discarded still counts against a passing subset after it (in its line
// or its own call); a name subset after a failure backs no claim; a test
// piped through tail is evidence after set -o pipefail (else the
// rejection says so), and a go test piped through tail when its output
// proves the pass; a profile written outside the tree and the word
// setsid as an argument change nothing.
func TestEvidenceThroughTheRealCommand(t *testing.T) {
	cases := []struct {
		name, script, status string
		want                 []string
	}{
		{
			name: "a failing run hidden, then a passing subset in its line", status: "rejected",
			script: `- tools: [{Bash: {command: "sh fail.sh >/dev/null; sh pass.sh"}}]`,
			want:   []string{`it does not run all that "sh fail.sh" ran, with its output hidden`},
		},
		{
			name: "a failing run with stdout discarded, then a passing subset", status: "rejected",
			script: `- tools: [{Bash: {command: "sh fail.sh 2>&1 >/dev/null"}}]
    - tools: [{Bash: {command: "sh pass.sh"}}]`,
			want: []string{`it does not run all that "sh fail.sh" ran`},
		},
		{
			name: "a failing run filtered by grep -v FAIL, then a passing subset", status: "rejected",
			script: `- tools: [{Bash: {command: "sh fail.sh | grep -v FAIL; sh pass.sh"}}]`,
			want:   []string{`it does not run all that "sh fail.sh" ran, with its output piped through grep -v FAIL`},
		},
		{
			name: "a failure, then a name subset", status: "rejected",
			script: `- tools: [{Bash: {command: "sh pytest.sh -q"}}]
    - tools: [{Bash: {command: "sh pytest.sh -q -k add"}}]`,
			want: []string{`it does not run all that "sh pytest.sh -q" ran, which failed`},
		},
		{
			name: "a name exclusion", status: "rejected",
			script: `- tools: [{Bash: {command: "sh pytest.sh -k 'not add'"}}]`,
			want:   []string{`it skips tests (-k not add)`},
		},
		{
			name: "piped through tail", status: "rejected",
			script: `- tools: [{Bash: {command: "sh pass.sh | tail -n 5"}}]`,
			want:   []string{`run the tests alone, joined with &&, or after set -o pipefail`},
		},
		{
			// set reads options up to -- (review evidence3 P1-1)
			name: "set -- -o pipefail sets no pipefail", status: "rejected",
			script: `- tools: [{Bash: {command: "set -- -o pipefail; sh fail.sh 2>&1 | tail -n 0"}}]`,
			want:   []string{`the report says tests pass, but the child ran no test command`},
		},
		{
			// a line past 10,000 syntax nodes is not read: a change, no
			// evidence (review evidence3 P1-3)
			name: "a line too big to read", status: "rejected",
			script: `- tools: [{Bash: {command: "sh pass.sh` + strings.Repeat(" x", 6000) + `"}}]`,
			want:   []string{`no test command ran after its last change`},
		},
		{
			name: "piped through tail after set -o pipefail", status: "done",
			script: `- tools: [{Bash: {command: "set -o pipefail; sh pass.sh 2>&1 | tail -n 5"}}]`,
		},
		{
			name: "a failure piped through tail after set -o pipefail", status: "rejected",
			script: `- tools: [{Bash: {command: "set -o pipefail; sh fail.sh 2>&1 | tail -n 5"}}]`,
			want:   []string{`failed (Exit code 1)`},
		},
		{
			name: "a Makefile whose test recipe the child made true", status: "rejected",
			script: `- tools: [{Bash: {command: "printf 'test:\\n\\ttrue\\n' > Makefile && make test"}}]`,
			want:   []string{`it changed Makefile, whose test recipe runs no test command brood knows`},
		},
		{
			name: "a Makefile whose test recipe the child made a test run", status: "done",
			script: `- tools: [{Bash: {command: "printf 'test:\\n\\t@sh pass.sh\\n' > Makefile && make test"}}]`,
		},
		{
			name: "grep setsid is no job", status: "done",
			script: `- tools: [{Bash: {command: "grep -c setsid notes.txt"}}]
    - tools: [{Bash: {command: "sh pass.sh"}}]`,
		},
		{
			name: "go test piped through tail", status: "done",
			script: `- tools: [{Bash: {command: "go test ./ok/ 2>&1 | tail -n 20", timeout: 600000}}]`,
		},
		{
			name: "go test failing hidden, then a package", status: "rejected",
			script: `- tools: [{Bash: {command: "go test ./... >/dev/null; go test ./ok/", timeout: 600000}}]`,
			want:   []string{`it does not run all that "go test ./..." ran, with its output hidden`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{
				"README.md": "# x\n",
				"Makefile":  "test:\n\tsh pass.sh\n",
				"notes.txt": "setsid\n",
				"pass.sh":   "echo ok\nexit 0\n",
				"fail.sh":   "echo '--- FAIL: TestX'\nexit 1\n",
				// a runner in pytest's dialect: fails unless -k selects
				"pytest.sh":     "case \"$*\" in *-k*) echo '1 passed'; exit 0;; esac\necho '1 failed, 1 passed'; exit 1\n",
				"go.mod":        "module example.com/ev\n\ngo 1.22\n",
				"ok/ok_test.go": "package ok\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n",
				"p2/p2_test.go": "package p2\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) { t.Fatal(\"got -1\") }\n",
			})
			writeSettings(t, p.Root, "test_commands = [\"sh pass.sh\", \"sh fail.sh\", \"sh pytest.sh\", \"go test\", \"make test\"]\n")
			model := p.Script("s.yaml", "agents:\n  general-purpose:\n    "+tc.script+"\n    - say: \""+fullReport+"\\n\\nAll tests pass.\"\n")
			_, stdout, stderr := p.Brood(t.Context(), []string{"BROOD_TRUST_PROJECT=1"}, "subagent", "general-purpose", "--model", model, "--description", "do it", "--allow", "Bash", "Do the task.")
			if !strings.Contains(stdout, `status="`+tc.status+`"`) {
				t.Fatalf("status is not %s\nstdout:\n%s\nstderr:\n%s", tc.status, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("missing %q\nstdout:\n%s", w, stdout)
				}
			}
		})
	}
}
