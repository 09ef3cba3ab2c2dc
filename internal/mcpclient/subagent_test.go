package mcpclient_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
)

// Each agent calls the notes server's tools in its first turn and reports
// the results in its second.
const subagentScript = `agents:
  envy:
    - tools:
        - mcp__notes__has_env: {text: NOTES_SECRET}
    - say: "envy [{{result 0}}]"
  "*":
    - tools:
        - mcp__notes__echo: {text: hi}
        - mcp__notes__write_note: {text: written}
    - say: "{{.Agent}} echo=[{{result 0}}] write=[{{result 1}}]"
`

func agentFile(name, tools, servers string) string {
	return "---\nname: " + name + "\ndescription: test agent " + name + "\n" + tools + servers + "---\nYou are " + name + ".\n"
}

// subagentProject is a git repository with four agents: noter names the
// notes server inline and lists its tools; sibling names none; reader is
// read-only (sandbox: read-only) with all of notes' tools; inheritor lists no tools and so
// inherits the servers this process has (none configured here, but its own
// mcpServers entry "configured" names one).
func subagentProject(t *testing.T, trusted bool, configured map[string]mcpspec.Spec, allow []string) (string, *spawn.Dispatcher) {
	t.Helper()
	root, home := t.TempDir(), t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	exe, err := os.Executable()
	must(t, err)
	inline := "mcpServers:\n  - notes:\n      command: " + exe + "\n      env: {BROOD_MCPTEST_SERVER: \"1\"}\n"
	agents := map[string]string{
		"noter":     agentFile("noter", "tools: Read, mcp__notes__echo, mcp__notes__write_note\n", inline),
		"sibling":   agentFile("sibling", "tools: Read, Write\n", ""),
		"reader":    agentFile("reader", "tools: Read, Grep, mcp__notes__*\nsandbox: read-only\n", inline),
		"inheritor": agentFile("inheritor", "", "mcpServers: [notes]\n"),
		"envy":      agentFile("envy", "tools: mcp__notes__has_env\n", "mcpServers:\n  - notes:\n      command: "+exe+"\n      env: {BROOD_MCPTEST_SERVER: \"1\", NOTES_SECRET: \"${NOTES_TOKEN}\"}\n"),
	}
	dir := filepath.Join(root, ".brood", "agents")
	must(t, os.MkdirAll(dir, 0o755))
	for n, body := range agents {
		must(t, os.WriteFile(filepath.Join(dir, n+".md"), []byte(body), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(root, ".gitignore"), []byte(".brood/\n"), 0o644))
	sp := filepath.Join(root, ".brood", "script.yaml")
	must(t, os.WriteFile(sp, []byte(subagentScript), 0o644))
	reg, diags := registry.Load(registry.Options{ProjectRoot: root, Home: home})
	for _, d := range diags {
		if d.Severity == registry.SeverityError {
			t.Fatalf("registry: %s", d)
		}
	}
	s := settings.Defaults()
	s.Pool.PingInterval = settings.Duration{Duration: 100 * time.Millisecond}
	life, cancel := context.WithCancel(context.Background())
	d, err := spawn.New(spawn.Config{
		ProjectRoot: root, Workspace: root, Registry: reg, Settings: s, Exe: exe,
		Env:   append(os.Environ(), "BROOD_TEST_MAIN=1", "HOME="+home, "NOTES_TOKEN=not-a-real-token-1234"),
		Depth: 0, MaxDepth: 1, SourceAgent: "root", Lifetime: life,
		ParentSystem: "You are the root.", ParentModel: "script:" + sp,
		ParentTools:  []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep", "LS"},
		Permissions:  dispatch.Permissions{Mode: "default", Allow: allow},
		MCP:          configured,
		TrustProject: func(string) bool { return trusted },
	})
	must(t, err)
	t.Cleanup(func() { cancel(); d.WaitBackground() })
	return root, d
}

func dispatchText(t *testing.T, d *spawn.Dispatcher, agent string) string {
	t.Helper()
	out, err := d.Call(context.Background(), call.Spec{Agent: agent, Prompt: "use the notes server", Description: "notes"})
	must(t, err)
	return out.Text
}

func TestSubagentGetsOnlyTheServersItNames(t *testing.T) {
	notes := notesSpec(t)
	root, d := subagentProject(t, true, map[string]mcpspec.Spec{"notes": notes}, []string{"mcp__notes__write_note"})

	// noter names the server and lists both tools: it calls them, and the
	// write (allowed by the rule) lands in the work tree.
	if got := dispatchText(t, d, "noter"); !strings.Contains(got, "noter echo=[echo: hi] write=[wrote note.txt]") {
		t.Errorf("noter:\n%s", got)
	}
	if b, err := os.ReadFile(filepath.Join(root, "note.txt")); err != nil || string(b) != "written" {
		t.Errorf("note.txt = %q, %v", b, err)
	}
	// Its sibling names no server: the tools do not exist for it.
	got := dispatchText(t, d, "sibling")
	if !strings.Contains(got, `echo=[unknown tool "mcp__notes__echo"`) || !strings.Contains(got, `write=[unknown tool "mcp__notes__write_note"`) {
		t.Errorf("sibling:\n%s", got)
	}
	// A read-only agent gets only what the server marks readOnlyHint.
	got = dispatchText(t, d, "reader")
	if !strings.Contains(got, "echo=[echo: hi]") || !strings.Contains(got, `write=[unknown tool "mcp__notes__write_note"`) {
		t.Errorf("reader:\n%s", got)
	}
	// A definition without tools inherits the configured servers.
	if got := dispatchText(t, d, "inheritor"); !strings.Contains(got, "echo=[echo: hi] write=[wrote note.txt]") {
		t.Errorf("inheritor:\n%s", got)
	}
}

func TestServerToolsNeedPermission(t *testing.T) {
	_, d := subagentProject(t, true, nil, nil)
	got := dispatchText(t, d, "noter")
	if !strings.Contains(got, "echo=[echo: hi]") || !strings.Contains(got, `write=[permission denied: mcp__notes__write_note needs approval`) {
		t.Errorf("noter without an allow rule:\n%s", got)
	}
}

func TestUntrustedProjectStartsNoServer(t *testing.T) {
	root, d := subagentProject(t, false, nil, []string{"mcp__notes__*"})
	got := dispatchText(t, d, "noter")
	if !strings.Contains(got, `echo=[unknown tool "mcp__notes__echo"`) {
		t.Errorf("noter in an untrusted project:\n%s", got)
	}
	tasks, err := dispatch.ListTasks(root)
	must(t, err)
	if len(tasks) != 1 || !strings.Contains(strings.Join(tasks[0].Envelope.Notes, "\n"), "not started until you trust this project") {
		t.Errorf("the envelope does not say why: %+v", tasks[0].Envelope.Notes)
	}
}

// TestServerSecretsReachTheServer: a child's environment keeps no
// secret-looking variable unless asked, but those its MCP servers' specs
// reference (${NOTES_TOKEN}) are asked for by naming the server.
func TestServerSecretsReachTheServer(t *testing.T) {
	_, d := subagentProject(t, true, nil, nil)
	if got := dispatchText(t, d, "envy"); !strings.Contains(got, "envy [NOTES_SECRET is set]") {
		t.Errorf("envy:\n%s", got)
	}
}
