package e2e_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestEdgeGuardrails: before a child's return is accepted the parent checks
// its shape, scope, evidence and refused attempts, and the model sees each
// finding as a Concern line while the status stays as the child gave it.
func TestEdgeGuardrails(t *testing.T) {
	const report = `## What I did\nWork.\n\n## What I found\nThings.\n\n## Files changed\nsee below\n\n## Problems\nnone`
	cases := []struct {
		name, agent, script string
		flags               []string
		want                []string
		none                bool
	}{
		{
			name: "clean", agent: "general-purpose", none: true,
			script: `- say: "` + report + `"`,
		},
		{
			name: "shape", agent: "general-purpose",
			script: `- say: "## What I did\nNot much."`,
			want:   []string{"Concern: shape: the report lacks the section(s) it was asked for: What I found, Files changed, Problems"},
		},
		{
			name: "scope", agent: "scoped", flags: []string{"--allow", "Bash"},
			script: `- tools: [{Bash: {command: "echo hacked >> README.md"}}]
    - say: "` + report + `"`,
			want: []string{"Concern: scope: changed README.md outside what it may write (src/**)"},
		},
		{
			name: "evidence", agent: "general-purpose",
			script: `- say: "` + report + `\n\nI updated src/auth.go and all tests pass."`,
			want:   []string{"Concern: evidence: the report says tests pass, but the child ran no test command", "Concern: evidence: the report says it changed src/auth.go, but no edit touched it"},
		},
		{
			name: "unauthorized", agent: "general-purpose",
			script: `- tools: [{Bash: {command: "mkdir d25"}}]
    - say: "` + report + `\n\nCreated d25."`,
			want: []string{`Concern: unauthorized: Bash "mkdir d25" was refused: permission denied`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, map[string]string{
				"README.md":               "# x\n",
				"src/a.go":                "package src\n",
				".brood/agents/scoped.md": "---\nname: scoped\ndescription: Edits src only.\ntools: Read, Edit(src/**), Bash\n---\nYou edit src.\n",
			})
			model := p.Script("s.yaml", "agents:\n  \""+tc.agent+"\":\n    "+tc.script+"\n")
			args := append([]string{"subagent", tc.agent, "--model", model, "--description", "do it", "Do the task."}, tc.flags...)
			_, stdout, stderr := p.Brood(t.Context(), nil, args...)
			if !strings.Contains(stdout, `status="done"`) {
				t.Fatalf("status is not done\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			if tc.none && strings.Contains(stdout, "Concern:") {
				t.Fatalf("a clean report got concerns:\n%s", stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("missing %q\nstdout:\n%s\nstderr:\n%s", w, stdout, stderr)
				}
			}
			// brood tasks (list and show) says the same, from the verdict.
			id := regexp.MustCompile(`task-id="([^"]+)"`).FindStringSubmatch(stdout)
			if id == nil {
				t.Fatalf("no task id in\n%s", stdout)
			}
			_, list, _ := p.Brood(t.Context(), nil, "tasks")
			_, show, _ := p.Brood(t.Context(), nil, "tasks", "show", id[1])
			if tc.none != !strings.Contains(list, "concern(s)]") {
				t.Errorf("brood tasks and the concerns disagree (none=%v):\n%s", tc.none, list)
			}
			for _, w := range tc.want {
				if line := "concern  " + strings.TrimPrefix(w, "Concern: "); !strings.Contains(show, line) {
					t.Errorf("brood tasks show lacks %q:\n%s", line, show)
				}
			}
		})
	}
}
