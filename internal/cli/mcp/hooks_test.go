package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHooksRunForMCPDispatches: a Task over MCP runs the user's hooks as a
// brood run's dispatch does: SubagentStart and SubagentStop once each, and
// PreToolUse for the subagent's own tool call, named by its task id.
func TestHooksRunForMCPDispatches(t *testing.T) {
	root, env := project(t)
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	log := filepath.Join(t.TempDir(), "hooks.log")
	cmd := `cat >> ` + log + `; echo >> ` + log
	hook := `[{"hooks":[{"type":"command","command":"` + cmd + `"}]}]`
	must(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o755))
	must(t, os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"hooks":{"SubagentStart":`+hook+`,"SubagentStop":`+hook+`,"PreToolUse":[{"matcher":"Read","hooks":[{"type":"command","command":"`+cmd+`"}]}]}}`), 0o644))
	srv := brood(t, root, env, "mcp")
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: srv}, nil)
	must(t, err)
	delegate(t, cs)
	must(t, cs.Close())
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("no hook ran for the MCP dispatch: %v", err)
	}
	counts := map[string]int{}
	var task string
	dec := json.NewDecoder(strings.NewReader(string(data)))
	for dec.More() {
		var r map[string]any
		must(t, dec.Decode(&r))
		ev, _ := r["hook_event_name"].(string)
		counts[ev]++
		if r["agent_type"] != "explore" {
			t.Errorf("%s for %v, want the explore subagent: %v", ev, r["agent_type"], r)
		}
		id, _ := r["agent_id"].(string)
		if task == "" {
			task = id
		}
		if id == "" || id != task {
			t.Errorf("%s names agent %q, want the one task %q", ev, id, task)
		}
		if ev == "PreToolUse" && r["tool_name"] != "Read" {
			t.Errorf("PreToolUse for %v", r["tool_name"])
		}
	}
	if counts["SubagentStart"] != 1 || counts["SubagentStop"] != 1 || counts["PreToolUse"] != 1 {
		t.Errorf("hooks fired %v, want one SubagentStart, one PreToolUse (the Read), one SubagentStop:\n%s", counts, data)
	}
}
