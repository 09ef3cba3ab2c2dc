package run_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestRunStartAgentFiles: at the start of a run, brood says which agent
// files it does not load as written (a definition that would shadow a
// built-in, a .md with no frontmatter), not only in brood agents check; a
// file without name: is dispatchable by its file name; and ~/.brood/agents
// is a user directory beside ~/.config/brood/agents.
func TestRunStartAgentFiles(t *testing.T) {
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	agents := filepath.Join(p.Root, ".brood", "agents")
	clitest.WriteFile(t, filepath.Join(agents, "nameless.md"), "---\ndescription: named by its file\ntools: Read\n---\nYou read.\n")
	clitest.WriteFile(t, filepath.Join(agents, "notes.md"), "# Our agents\n\nnameless reads files.\n")
	clitest.WriteFile(t, filepath.Join(agents, "explore.md"), "---\nname: explore\ndescription: my explore\ntools: Read\n---\nMine.\n")
	clitest.WriteFile(t, filepath.Join(p.Home, ".brood", "agents", "homey.md"), "---\nname: homey\ndescription: from ~/.brood/agents\ntools: Read\n---\nYou live at home.\n")
	script := p.Script("s.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: nameless, description: "by file name", prompt: "Read the README."}
        - Task: {subagent_type: homey, description: "from home", prompt: "Read the README."}
    - say: "both: {{result 0}} {{result 1}}"
  nameless:
    - tools: [{Read: {file_path: README.md}}]
    - say: "nameless read it"
  homey:
    - tools: [{Read: {file_path: README.md}}]
    - say: "homey read it"
`)
	d := p.Start(nil, "run", "--model", script, "go")
	if code := d.Wait(t); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, d.Stdout.String(), d.Stderr.String())
	}
	out, errOut := d.Stdout.String(), d.Stderr.String()
	for _, w := range []string{
		"brood: agents: " + filepath.Join(agents, "explore.md") + `:2: warning: "explore" is a built-in agent and can't be redefined`,
		"brood: agents: " + filepath.Join(agents, "notes.md") + ":1: warning: no frontmatter at the start of the file",
	} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	for _, w := range []string{`agent="nameless" status="done"`, "nameless read it", `agent="homey" status="done"`, "homey read it"} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	// brood agents check says the same, and brood agents lists both.
	c := p.Start(nil, "agents", "check")
	c.Wait(t)
	if check := c.Stdout.String(); !strings.Contains(check, filepath.Join(agents, "notes.md")+":1: warning: no frontmatter") || !strings.Contains(check, `"explore" is a built-in agent`) {
		t.Errorf("brood agents check:\n%s", check)
	}
	l := p.Start(nil, "agents")
	l.Wait(t)
	for _, w := range []string{"nameless ", "homey "} {
		if !strings.Contains(l.Stdout.String(), w) {
			t.Errorf("brood agents does not list %q:\n%s", w, l.Stdout.String())
		}
	}
}

// depthScript: the root hands work to general-purpose (which may delegate),
// and general-purpose hands a read to explore when it has the Task tool.
const depthScript = `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "middle", prompt: "Delegate a read of the README."}
    - say: "root: {{result 0}}"
  general-purpose:
    - tools:
        - Task: {subagent_type: explore, description: "grandchild", prompt: "Read the README."}
    - say: "## What I did\nDelegated.\n## What I found\nmiddle saw: {{trunc 300 (result 0)}}\n## Files changed\nnone\n## Problems\nnone"
  explore:
    - tools: [{Read: {file_path: README.md}}]
    - say: "## What I did\nRead it.\n## What I found\ngrandchild read the README\n## Files changed\nnone\n## Problems\nnone"
`

// TestRunDepthFlags: --max-subagent-depth N and --enable-subagents (its
// shorthand for 2) let the root's children delegate once more, as HooCode
// documents; without them the cap is the settings' (1).
func TestRunDepthFlags(t *testing.T) {
	cases := []struct {
		name  string
		flags []string
		deep  bool
	}{
		{"default cap", nil, false},
		{"--max-subagent-depth 2", []string{"--max-subagent-depth", "2"}, true},
		{"--enable-subagents", []string{"--enable-subagents"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := clitest.NewProject(t)
			t.Setenv(clitest.TestMainEnv, "1")
			args := append([]string{"run", "--model", p.Script("s.yaml", depthScript)}, tc.flags...)
			d := p.Start(nil, append(args, "go")...)
			if code := d.Wait(t); code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, d.Stdout.String(), d.Stderr.String())
			}
			out, errOut := d.Stdout.String(), d.Stderr.String()
			if got := strings.Contains(out, "grandchild read the README"); got != tc.deep {
				t.Errorf("the grandchild ran: %v, want %v\nstdout:\n%s\nstderr:\n%s", got, tc.deep, out, errOut)
			}
			code, list, _ := p.Brood("tasks", "--json")
			var tasks []struct {
				Agent string
				Depth int
			}
			if err := json.Unmarshal([]byte(list), &tasks); code != 0 || err != nil {
				t.Fatalf("tasks --json: %v\n%s", err, list)
			}
			depth2 := 0
			for _, x := range tasks {
				if x.Agent == "explore" && x.Depth == 2 {
					depth2++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.deep]; depth2 != want {
				t.Errorf("%d explore task(s) at depth 2, want %d: %s", depth2, want, list)
			}
		})
	}
	p := clitest.NewProject(t)
	code, _, errOut := p.Brood("run", "--model", "script:x", "--max-subagent-depth", "-1", "go")
	if code != 2 || !strings.Contains(errOut, "--max-subagent-depth -1 is negative") {
		t.Errorf("a negative depth: exit %d, stderr %q; want a usage error", code, errOut)
	}
}
