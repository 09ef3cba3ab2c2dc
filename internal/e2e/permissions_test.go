package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// childRedirect is a script whose general-purpose child writes a file
// through a shell redirection and reports the tool result.
const childRedirect = `
agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "write out.txt", prompt: "Write hi into out.txt with echo."}
    - say: "{{result 0}}"
  general-purpose:
    - tools:
        - Bash: {command: "echo hi > out.txt"}
    - say: "## What I did\nRan echo.\n\n## What I found\n{{result 0}}\n\n## Files changed\nout.txt\n\n## Problems\nnone"
`

// TestRedirectHintWorks: a child's denied "echo hi > out.txt" names the
// rules that would allow it, and with exactly those rules (or a prefix rule
// plus acceptEdits) the same child writes the file.
func TestRedirectHintWorks(t *testing.T) {
	cases := []struct {
		name      string
		flags     []string
		wantHint  string
		wantWrote bool
	}{
		{name: "nothing allowed names both rules", wantHint: `"Bash(echo:*)" and "Write(out.txt)"`},
		{name: "prefix rule alone names the file", flags: []string{"--allow", "Bash(echo:*)"}, wantHint: `"Write(out.txt)"`},
		{name: "the hinted rules work", flags: []string{"--allow", "Bash(echo:*)", "--allow", "Write(out.txt)"}, wantWrote: true},
		{name: "acceptEdits covers the redirect", flags: []string{"--allow", "Bash(echo:*)", "--permission-mode", "acceptEdits"}, wantWrote: true},
		{name: "the exact line works", flags: []string{"--allow", "Bash(echo hi > out.txt)"}, wantWrote: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, nil)
			model := p.Script("s.yaml", childRedirect)
			args := append([]string{"subagent", "general-purpose", "--model", model, "--description", "write out.txt", "Write hi into out.txt with echo."}, tc.flags...)
			_, stdout, stderr := p.Brood(t.Context(), nil, args...)
			_, err := os.Stat(filepath.Join(p.Root, "out.txt"))
			if wrote := err == nil; wrote != tc.wantWrote {
				t.Fatalf("out.txt written = %v, want %v\nstdout:\n%s\nstderr:\n%s", wrote, tc.wantWrote, stdout, stderr)
			}
			if tc.wantHint != "" && !strings.Contains(stdout, tc.wantHint) {
				t.Fatalf("the denial does not name %s\nstdout:\n%s\nstderr:\n%s", tc.wantHint, stdout, stderr)
			}
		})
	}
}
