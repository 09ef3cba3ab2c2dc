package mcp_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/mcpclient/mcptest"
)

// TestSiblingsThroughBroodRun runs `brood run` as a real process whose
// root fans out three siblings, each a real child process: noter's
// definition names the notes server (inline, a real stdio process) and
// calls its tool; sibling lists the same tool but names no server, and
// inheritor lists no tools (it inherits the root's, which has no notes):
// neither can call it. The server runs for noter alone and is stopped with
// it.
func TestSiblingsThroughBroodRun(t *testing.T) {
	root, env := project(t)
	exe, err := os.Executable()
	must(t, err)
	// In the work tree: the server runs under its in-place child's
	// sandbox, which writes nowhere else but its TMPDIR and the build caches.
	pidFile := filepath.Join(root, "notes.pid")
	inline := "mcpServers:\n  - notes:\n      command: " + exe + "\n      env: {" + mcptest.EnvServer + ": \"1\", " + mcptest.EnvPID + ": " + strconv.Quote(pidFile) + "}\n"
	agents := map[string]string{
		"noter":     "tools: Read, mcp__notes__echo\n" + inline,
		"sibling":   "tools: Read, mcp__notes__echo\n",
		"inheritor": "",
	}
	must(t, os.MkdirAll(filepath.Join(root, ".brood", "agents"), 0o755))
	for name, extra := range agents {
		body := "---\nname: " + name + "\ndescription: calls the notes server\n" + extra + "---\nYou are " + name + ".\n"
		must(t, os.WriteFile(filepath.Join(root, ".brood", "agents", name+".md"), []byte(body), 0o644))
	}
	sp := filepath.Join(root, ".brood", "script.yaml")
	must(t, os.WriteFile(sp, []byte(`agents:
  root:
    - tools:
        - Task: {subagent_type: noter, description: "noter", prompt: "Echo your name.", isolation: none}
        - Task: {subagent_type: sibling, description: "sibling", prompt: "Echo your name.", isolation: none}
        - Task: {subagent_type: inheritor, description: "inheritor", prompt: "Echo your name.", isolation: none}
    - say: "ROOT [{{result 0}}] [{{result 1}}] [{{result 2}}]"
  "*":
    - tools:
        - mcp__notes__echo: {text: "{{.Agent}}"}
    - say: "{{.Agent}} saw [{{result 0}}]"
`), 0o644))

	// The inline server is the project's configuration: trusted for this run.
	out, err := brood(t, root, append(env, "BROOD_TRUST_PROJECT=1"), "run", "ask all three").CombinedOutput()
	if err != nil {
		t.Fatalf("brood run: %v\n%s", err, out)
	}
	for _, want := range []string{
		"noter saw [echo: noter]",
		`sibling saw [unknown tool "mcp__notes__echo"`,
		`inheritor saw [unknown tool "mcp__notes__echo"`,
		"tools: mcp__notes__echo names MCP server notes, which is neither configured nor in mcpServers; left out",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("brood run's answer lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(pidFile); err != nil {
		t.Fatalf("the notes server never started: %v", err)
	}
	// Stopped with its child: gone (or, at most, a zombie being reaped).
	// Found by its environment, which names this test's pid file: the pid
	// it wrote is its PID namespace's (its child's own), not this one's.
	mark := mcptest.EnvPID + "=" + pidFile
	deadline := time.Now().Add(30 * time.Second)
	for len(liveWithEnv(mark)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the notes server (pids %v) outlived its child and brood run", liveWithEnv(mark))
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
}

// liveWithEnv lists the running processes (not zombies) whose environment
// holds kv.
func liveWithEnv(kv string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && slices.Contains(strings.Split(string(b), "\x00"), kv) {
			out = append(out, pid)
		}
	}
	return out
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
