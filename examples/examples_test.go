// Package examples holds agent files and scripts users can copy; this test
// keeps them loading cleanly and running offline.
package examples

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/testbrood"
)

func TestMain(m *testing.M) { testbrood.Main(m, "BROOD_TEST_MAIN") }

func TestAgentFilesLoadCleanly(t *testing.T) {
	defs, diags := registry.CheckPath("agents")
	if len(defs) != 3 {
		t.Fatalf("loaded %d definitions, want 3", len(defs))
	}
	for _, d := range diags {
		t.Errorf("%s", d)
	}
}

// TestReviewFanout runs the example script with the example agents, as a
// user would, through the real binary (this test binary standing in for
// brood) and real child processes three levels deep.
func TestReviewFanout(t *testing.T) {
	root := t.TempDir()
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("git", "init", "-q")
	must(t, os.MkdirAll(filepath.Join(root, ".brood", "agents"), 0o755))
	for _, f := range []string{"orchestrator.md", "reviewer.md", "refactorer.md"} {
		b, err := os.ReadFile(filepath.Join("agents", f))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(root, ".brood", "agents", f), b, 0o644))
	}
	must(t, os.WriteFile(filepath.Join(root, ".brood", "settings.toml"), []byte("maxSubagentDepth = 2\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "README.md"), []byte("# sample\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	script, err := filepath.Abs(filepath.Join("scripts", "review-fanout.yaml"))
	must(t, err)
	exe, err := os.Executable()
	must(t, err)
	cmd := exec.Command(exe, "run", "--model", "script:"+script, "--max-turns", "5", "review")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "BROOD_TEST_MAIN=1", "BROOD_CHILD_EXE="+exe, "HOME="+t.TempDir(), "BROOD_TRUST_PROJECT=1") // the examples' settings raise the depth
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("brood run: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"README.md", "main.go", "Changed files:", `agent="orchestrator"`, `agent="reviewer"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s\nstderr:\n%s", want, out, stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "depth=2/2") {
		t.Errorf("the orchestrator did not delegate one level further:\n%s", stderr.String())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestHooksExample runs the review fan-out under the example hooks (in the
// user's settings): every subagent's start and stop is in the log, paired,
// and brood tasks tree rolls the tokens up.
func TestHooksExample(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, ".brood", "agents"), 0o755))
	must(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o755))
	hooks, err := os.ReadFile(filepath.Join("hooks", "settings.json"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(home, ".claude", "settings.json"), hooks, 0o644))
	for _, f := range []string{"orchestrator.md", "reviewer.md", "refactorer.md"} {
		b, err := os.ReadFile(filepath.Join("agents", f))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(root, ".brood", "agents", f), b, 0o644))
	}
	must(t, os.WriteFile(filepath.Join(root, ".brood", "settings.toml"), []byte("maxSubagentDepth = 2\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "README.md"), []byte("# sample\n"), 0o644))
	gitInit := exec.Command("git", "init", "-q")
	gitInit.Dir = root
	must(t, gitInit.Run())
	script, err := filepath.Abs(filepath.Join("scripts", "review-fanout.yaml"))
	must(t, err)
	exe, err := os.Executable()
	must(t, err)
	brood := func(args ...string) string {
		cmd := exec.Command(exe, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "BROOD_TEST_MAIN=1", "BROOD_CHILD_EXE="+exe, "HOME="+home)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("brood %v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String()
	}
	// The project's settings raise the depth: the user trusts them first.
	if out := brood("trust"); !strings.Contains(out, "trusted "+root) {
		t.Fatalf("brood trust: %s", out)
	}
	brood("run", "--model", "script:"+script, "--max-turns", "5", "review")
	data, err := os.ReadFile(filepath.Join(root, ".brood", "subagents.jsonl"))
	must(t, err)
	count := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r struct {
			Event string `json:"hook_event_name"`
			Agent string `json:"agent_type"`
		}
		must(t, json.Unmarshal([]byte(line), &r))
		count[r.Event+" "+r.Agent]++
	}
	for _, k := range []string{"SubagentStart orchestrator", "SubagentStop orchestrator", "SubagentStart reviewer", "SubagentStop reviewer"} {
		if count[k] != 1 {
			t.Errorf("%s: %d records, want 1 (%v)", k, count[k], count)
		}
	}
	if count["SubagentStart explore"] != 2 || count["SubagentStop explore"] != 2 {
		t.Errorf("explorers: %v", count)
	}
	tree := brood("tasks", "tree")
	for _, w := range []string{"(session)", "─ orchestrator ", "─ explore ", "─ reviewer ", "TREE COST"} {
		if !strings.Contains(tree, w) {
			t.Errorf("tasks tree lacks %q:\n%s", w, tree)
		}
	}
}
