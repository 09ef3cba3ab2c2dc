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

// TestAgentPermissionMode: an agent file's permissionMode (Claude Code's
// key) is honoured within what the parent may do: acceptEdits lets the child
// Write without a rule under a default-mode parent; bypassPermissions under
// a default parent is not granted, and the result says so.
func TestAgentPermissionMode(t *testing.T) {
	const script = `
agents:
  "*":
    - tools:
        - Write: {file_path: "made.txt", content: "made\n"}
    - say: "## What I did\nWrote.\n\n## What I found\n{{result 0}}\n\n## Files changed\nmade.txt\n\n## Problems\nnone"
`
	cases := []struct {
		mode      string
		wantWrote bool
		wantNote  string
	}{
		{mode: "acceptEdits", wantWrote: true},
		{mode: "bypassPermissions", wantNote: "beyond its parent's default"},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			p := newProject(t, map[string]string{
				"README.md":               "# x\n",
				".brood/agents/writer.md": "---\nname: writer\ndescription: Writes a file.\ntools: Read, Write\npermissionMode: " + tc.mode + "\n---\nYou write files.\n",
			})
			model := p.Script("s.yaml", script)
			_, stdout, stderr := p.Brood(t.Context(), []string{"BROOD_TRUST_PROJECT=1"}, "subagent", "writer", "--model", model, "--description", "make a file", "Write made.txt.")
			_, err := os.Stat(filepath.Join(p.Root, "made.txt"))
			if wrote := err == nil; wrote != tc.wantWrote {
				t.Fatalf("made.txt written = %v, want %v\nstdout:\n%s\nstderr:\n%s", wrote, tc.wantWrote, stdout, stderr)
			}
			if tc.wantNote != "" && !strings.Contains(stdout+stderr, tc.wantNote) {
				t.Fatalf("nothing says the mode was not granted (%q)\nstdout:\n%s\nstderr:\n%s", tc.wantNote, stdout, stderr)
			}
		})
	}
}
