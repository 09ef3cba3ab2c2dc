package e2e_test

import (
	"regexp"
	"strings"
	"testing"
)

// A scope-rejected in-place writer changed README.md on disk: every later
// reading must still say so.
func TestRejectedInPlaceWriterNamesItsFiles(t *testing.T) {
	p := newProject(t, map[string]string{
		"README.md":               "# x\n",
		"src/a.go":                "package src\n",
		".brood/agents/scoped.md": "---\nname: scoped\ndescription: Edits src only.\ntools: Read, Edit(src/**), Bash\n---\nYou edit src.\n",
	})
	model := p.Script("s.yaml", "agents:\n  \"scoped\":\n    - tools: [{Bash: {command: \"echo hacked >> README.md\"}}]\n    - say: \""+fullReport+"\"\n")
	env := []string{"BROOD_TRUST_PROJECT=1"}
	_, stdout, stderr := p.Brood(t.Context(), env, "subagent", "scoped", "--model", model, "--description", "do it", "Do the task.", "--allow", "Bash")
	m := regexp.MustCompile(`task-id="([^"]+)"`).FindStringSubmatch(stdout)
	if m == nil || !strings.Contains(stdout, `status="rejected"`) {
		t.Fatalf("not rejected\n%s\n%s", stdout, stderr)
	}
	t.Logf("LIVE:\n%s", stdout)
	id := m[1]
	_, show, _ := p.Brood(t.Context(), env, "tasks", "show", id)
	t.Logf("SHOW:\n%s", show)
	_, js, _ := p.Brood(t.Context(), env, "tasks", "show", id, "--json")
	i := strings.Index(js, "files_changed")
	for i >= 0 {
		t.Logf("JSON: %s", js[i:min(len(js), i+60)])
		j := strings.Index(js[i+1:], "files_changed")
		if j < 0 {
			break
		}
		i = i + 1 + j
	}
	_, outp, _ := p.Brood(t.Context(), env, "tasks", "output", id)
	t.Logf("OUTPUT:\n%s", outp)
	if !strings.Contains(show, "files    README.md") {
		t.Errorf("brood tasks show of the rejected in-place writer does not name README.md, which it changed on disk")
	}
}
