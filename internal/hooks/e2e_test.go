package hooks_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
)

// TestMain lets the test binary stand in for brood in real child processes.
func TestMain(m *testing.M) { clitest.Main(m) }

type project struct{ *clitest.Project }

// hookAgents are the subagents of the hook tests: lead delegates to scout;
// hanger hangs (the lifeguard kills it); sleeper thinks for an hour (a
// person kills it); timer outlives its hard timeout.
var hookAgents = map[string]string{
	"lead":    "---\nname: lead\ndescription: leads\ndelegate: [scout]\n---\nYou lead.\n",
	"scout":   "---\nname: scout\ndescription: reads\ntools: Read\n---\nYou read.\n",
	"hanger":  "---\nname: hanger\ndescription: hangs\ntools: Read\n---\nYou hang.\n",
	"sleeper": "---\nname: sleeper\ndescription: thinks for a long time\ntools: Read\n---\nYou think.\n",
	"timer":   "---\nname: timer\ndescription: runs out of time\ntools: Read\ntimeout: 2s\n---\nYou dawdle.\n",
}

const hookScript = `
agents:
  root:
    - cases:
        - if: "say hi"
          say: "hi"
        - if: "only the sleeper"
          tools:
            - Task: {subagent_type: sleeper, description: "think alone", prompt: "think"}
      tools:
        - Task: {subagent_type: lead, description: "lead the scouts", prompt: "lead"}
        - Task: {subagent_type: hanger, description: "hang", prompt: "hang"}
        - Task: {subagent_type: sleeper, description: "think", prompt: "think"}
        - Task: {subagent_type: timer, description: "dawdle", prompt: "dawdle"}
    - say: "root done"
  lead:
    - tools:
        - Task: {subagent_type: scout, description: "scout one", prompt: "one"}
        - Task: {subagent_type: scout, description: "scout two", prompt: "two"}
    - say: "lead done"
  scout:
    - say: "scouted the README"
  hanger:
    - freeze: true
  sleeper:
    - say: "thinking for an hour"
      delay: 1h
  timer:
    - say: "dawdling"
      delay: 1h
`

// newHookProject is a project with the agents above and user-level
// SubagentStart/SubagentStop hooks that append their stdin to a log.
func newHookProject(t *testing.T) (*project, string) {
	t.Helper()
	p := &project{clitest.NewProject(t)}
	t.Setenv(clitest.TestMainEnv, "1")
	t.Setenv("HOME", p.Home)
	for name, body := range hookAgents {
		clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", name+".md"), body)
	}
	spec := p.Script("hooks.yaml", hookScript)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "settings.toml"), "model = \""+spec+"\"\nmaxSubagentDepth = 2\n\n[pool]\nping_interval = \"200ms\"\nheartbeat_timeout = \"5s\"\nkill_grace = \"1s\"\n")
	log := filepath.Join(t.TempDir(), "hooks.log")
	cmd := "cat >> " + log + "; echo >> " + log
	hooks := `{"hooks":{"SubagentStart":[{"hooks":[{"type":"command","command":"` + cmd + `"}]}],"SubagentStop":[{"matcher":"*","hooks":[{"type":"command","command":"` + cmd + `"}]}]}}`
	clitest.WriteFile(t, filepath.Join(p.Home, ".claude", "settings.json"), hooks)
	return p, log
}

func countEvent(recs []map[string]any, event string) int {
	n := 0
	for _, r := range recs {
		if r["hook_event_name"] == event {
			n++
		}
	}
	return n
}

// readHookLog decodes the log and checks every record's Claude Code shape.
func readHookLog(t *testing.T, log string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("no hook ran: %v", err)
	}
	recs := clitest.JSONValues(t, string(data))
	want := map[string][]string{
		"SubagentStart": {"session_id", "transcript_path", "cwd", "prompt_id", "agent_id", "agent_type", "hook_event_name"},
		"SubagentStop": {"session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "agent_id", "agent_type", "hook_event_name",
			"stop_hook_active", "agent_transcript_path", "last_assistant_message", "background_tasks", "session_crons"},
	}
	for _, r := range recs {
		ev, _ := r["hook_event_name"].(string)
		for _, k := range want[ev] {
			if _, ok := r[k]; !ok {
				t.Errorf("%s record lacks Claude Code's %q: %v", ev, k, r)
			}
		}
		if _, ok := want[ev]; !ok {
			t.Errorf("unexpected record %v", r)
		}
	}
	return recs
}

// pairs counts starts and stops per agent_id and returns each stop.
func pairs(t *testing.T, recs []map[string]any) map[string]map[string]any {
	t.Helper()
	starts, stops := map[string]int{}, map[string]int{}
	stop := map[string]map[string]any{}
	for _, r := range recs {
		id, _ := r["agent_id"].(string)
		switch r["hook_event_name"] {
		case "SubagentStart":
			starts[id]++
			if stops[id] > 0 {
				t.Errorf("%s stopped before it started", id)
			}
		case "SubagentStop":
			stops[id]++
			stop[id] = r
		}
	}
	for id, n := range starts {
		if n != 1 || stops[id] != 1 {
			t.Errorf("agent %s: %d SubagentStart, %d SubagentStop; want exactly one each", id, n, stops[id])
		}
	}
	for id := range stops {
		if starts[id] == 0 {
			t.Errorf("agent %s: a SubagentStop without a SubagentStart", id)
		}
	}
	return stop
}

func broodInfo(r map[string]any) (status, killedBy string, late bool) {
	b, _ := r["brood"].(map[string]any)
	status, _ = b["status"].(string)
	killedBy, _ = b["killed_by"].(string)
	late, _ = b["late"].(bool)
	return
}

// TestSubagentHooksPairedWhateverKillsThem runs a nested fan-out (a lead
// with two scouts, a child the lifeguard kills, one a person kills with
// brood tasks kill, one its hard timeout kills) under SubagentStart and
// SubagentStop hooks, then a root that dies with its child running: every
// subagent has exactly one start and one stop, in Claude Code's shape, the
// dead root's owed stop fired late by the next brood run.
func TestSubagentHooksPairedWhateverKillsThem(t *testing.T) {
	p, log := newHookProject(t)
	root := p.Start(nil, "run", "--mode", "json", "fan out")
	sleeper := p.runningAgent("sleeper")
	p.WaitTranscript(sleeper, "the sleeper's first turn", func(r session.Record) bool { return r.Type == session.RecMessage })
	if code, out, errOut := p.Brood("tasks", "kill", sleeper); code != 0 {
		t.Fatalf("tasks kill: %d %s %s", code, out, errOut)
	}
	if code := root.Wait(t); code != 0 {
		t.Fatalf("root exited %d; stderr:\n%s", code, root.Stderr.String())
	}
	recs := readHookLog(t, log)
	stops := pairs(t, recs)
	byAgent := map[string][]map[string]any{}
	for _, r := range stops {
		byAgent[r["agent_type"].(string)] = append(byAgent[r["agent_type"].(string)], r)
	}
	for agent, n := range map[string]int{"lead": 1, "scout": 2, "hanger": 1, "sleeper": 1, "timer": 1} {
		if len(byAgent[agent]) != n {
			t.Errorf("%d stops of %s, want %d (all: %v)", len(byAgent[agent]), agent, n, recs)
		}
	}
	check := func(agent string, statuses []string, killedBy string) {
		t.Helper()
		for _, r := range byAgent[agent] {
			st, kb, late := broodInfo(r)
			if !slices.Contains(statuses, st) || (killedBy != "*" && kb != killedBy) || late {
				t.Errorf("%s stop: status %q killed_by %q late %v; want %v by %q", agent, st, kb, late, statuses, killedBy)
			}
		}
	}
	check("lead", []string{"done"}, "")
	check("scout", []string{"done"}, "")
	check("hanger", []string{"killed"}, "lifeguard")
	check("timer", []string{"killed"}, "timeout")
	check("sleeper", []string{"killed", "cancelled"}, "*")
	for _, r := range byAgent["scout"] {
		if b, _ := r["brood"].(map[string]any); b["parent_task_id"] != byAgent["lead"][0]["agent_id"] || b["depth"] != 2.0 {
			t.Errorf("scout stop not under the lead: %v", b)
		}
		if r["last_assistant_message"] != "scouted the README" || !strings.HasSuffix(r["agent_transcript_path"].(string), "/session.jsonl") {
			t.Errorf("scout stop: %v", r)
		}
	}
	n := len(stops)

	// The root dies (SIGKILL) with its child running: nobody is left to
	// fire the stop, until the next brood run in the project.
	root = p.Start(nil, "run", "--mode", "json", "only the sleeper")
	orphan := p.runningAgentNot("sleeper", sleeper)
	p.WaitTranscript(orphan, "the orphan's first turn", func(r session.Record) bool { return r.Type == session.RecMessage })
	if err := root.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	root.Wait(t)
	var lg dispatch.Log
	clitest.ReadRecord(t, p.Root, orphan, dispatch.LogFile, &lg)
	clitest.WaitFor(t, "the orphan to end after its parent", func() bool { return !dispatch.Alive(lg.PID, orphan) })
	if got := countEvent(readHookLog(t, log), "SubagentStop"); got != n {
		t.Errorf("before the next run: %d stops, want %d", got, n)
	}
	p.Brood("tasks") // a listing fires nothing
	if code, _, errOut := p.Brood("run", "say hi"); code != 0 {
		t.Fatalf("next run: %d %s", code, errOut)
	}
	recs = readHookLog(t, log)
	stops = pairs(t, recs)
	if st, _, late := broodInfo(stops[orphan]); len(stops) != n+1 || !late || (st != "cancelled" && st != "killed") {
		t.Errorf("the orphan's late stop: %v (status %q, late %v); %d stops", stops[orphan], st, late, len(stops))
	}
	if code, _, _ := p.Brood("run", "say hi"); code != 0 || len(pairs(t, readHookLog(t, log))) != len(stops) {
		t.Errorf("a second run fired the late stop again")
	}
}

// runningAgent waits for a running task of agent and returns its id.
func (p *project) runningAgent(agent string) string { return p.runningAgentNot(agent, "") }

func (p *project) runningAgentNot(agent, not string) string {
	p.T.Helper()
	var id string
	clitest.WaitFor(p.T, "a running "+agent, func() bool {
		for _, item := range p.ListJSON() {
			if item["agent"] == agent && item["status"] == dispatch.StatusRunning && item["id"] != not {
				id = item["id"].(string)
				return true
			}
		}
		return false
	})
	return id
}
