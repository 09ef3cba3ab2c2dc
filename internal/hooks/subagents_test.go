package hooks

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
)

func logRunner(t *testing.T) (*Session, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "log")
	cmd := Command{Type: "command", Command: "cat >> " + log + "; echo >> " + log}
	cfg := Config{SubagentStart: {{Hooks: []Command{cmd}}}, SubagentStop: {{Hooks: []Command{cmd}}}}
	r := New(cfg, Options{Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH")}})
	return NewSession(r, Common{SessionID: "S", Cwd: "/p", PermissionMode: "default"}), log
}

type logged struct {
	Event   string        `json:"hook_event_name"`
	AgentID string        `json:"agent_id"`
	Brood   *SubagentInfo `json:"brood"`
}

func readLog(t *testing.T, path string) []logged {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []logged
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var l logged
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		out = append(out, l)
	}
	return out
}

const (
	idA = "01JAAAAAAAAAAAAAAAAAAAAAAA"
	idG = "01JGGGGGGGGGGGGGGGGGGGGGGG"
	idX = "01JXXXXXXXXXXXXXXXXXXXXXXX"
	idB = "01JBBBBBBBBBBBBBBBBBBBBBBB"
)

// TestRelayedEventsStayInTheirSubtree: a child may speak for its own
// subtree only; when it stops, a grandchild whose stop never came is
// closed first, as killed with its parent.
func TestRelayedEventsStayInTheirSubtree(t *testing.T) {
	s, log := logRunner(t)
	root := t.TempDir()
	subs := s.Subagents(root, filepath.Join(root, "records"))
	subs.Observe(SubagentEvent{Start: true, TaskID: idA, Agent: "lead", Depth: 1})
	subs.Observe(SubagentEvent{Start: true, TaskID: idB, Agent: "other", Depth: 1})
	subs.Observe(SubagentEvent{Start: true, TaskID: idG, ParentTaskID: idA, Via: idA, Agent: "scout", Depth: 2})
	subs.Observe(SubagentEvent{Start: true, TaskID: idX, ParentTaskID: idB, Via: idA, Agent: "forged", Depth: 2}) // A speaking for B's subtree
	subs.Observe(SubagentEvent{Start: true, TaskID: "../../etc", ParentTaskID: idA, Via: idA, Agent: "bad id", Depth: 2})
	subs.Observe(SubagentEvent{TaskID: idA, Status: dispatch.StatusKilled, KilledBy: "lifeguard"})
	subs.Observe(SubagentEvent{TaskID: idA, Status: dispatch.StatusDone}) // a second stop
	subs.Close()                                                          // B's stop never came
	var got []string
	for _, l := range readLog(t, log) {
		st := ""
		if l.Brood != nil {
			st = l.Brood.Status + "/" + l.Brood.KilledBy
		}
		got = append(got, l.Event+" "+l.AgentID+" "+st)
	}
	want := []string{
		"SubagentStart " + idA + " /", "SubagentStart " + idB + " /", "SubagentStart " + idG + " /",
		"SubagentStop " + idG + " killed/parent", "SubagentStop " + idA + " killed/lifeguard", "SubagentStop " + idB + " killed/parent",
	}
	if len(got) != len(want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %q, want %q", i, got[i], want[i])
		}
	}
}

// TestLateStops: the stop a dead process owed is fired once, marked late,
// by the next process; one whose owner lives, or whose task is locked, is
// left alone.
func TestLateStops(t *testing.T) {
	s, log := logRunner(t)
	root := t.TempDir()
	records := filepath.Join(root, "records")
	dead := &marker{Common: Common{SessionID: "OLD", AgentID: idA, AgentType: "lead"}, Info: SubagentInfo{TaskID: idA, Depth: 1},
		TaskDir: dispatch.Dir(root, idA), Owner: owner{PID: 0}}
	alive := &marker{Common: Common{SessionID: "LIVE", AgentID: idB, AgentType: "lead"}, Info: SubagentInfo{TaskID: idB, Depth: 1},
		TaskDir: dispatch.Dir(root, idB), Owner: ownerOf()}
	locked := &marker{Common: Common{SessionID: "OLD", AgentID: idG, AgentType: "scout"}, Info: SubagentInfo{TaskID: idG, Depth: 1},
		TaskDir: dispatch.Dir(root, idG), Owner: owner{PID: 0}}
	for _, m := range []*marker{dead, alive, locked} {
		if _, err := claimStart(records, m); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(m.TaskDir, 0o755)
	}
	dispatch.WriteJSON(filepath.Join(dead.TaskDir, dispatch.ResultFile), dispatch.Result{TaskID: idA, Status: "cancelled", Summary: "last words"})
	unlock, err := dispatch.LockTask(locked.TaskDir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if n := s.LateStops(context.Background(), records); n != 1 {
		t.Fatalf("fired %d late stops, want 1", n)
	}
	if n := s.LateStops(context.Background(), records); n != 0 {
		t.Fatalf("fired %d again", n)
	}
	l := readLog(t, log)
	if len(l) != 1 || l[0].AgentID != idA || l[0].Brood == nil || !l[0].Brood.Late || l[0].Brood.Status != "cancelled" {
		t.Fatalf("late stop: %+v", l)
	}
	// Prune forgets the fired pair, keeps what is still owed.
	Forget(records, idA)
	Forget(records, idG)
	left, _ := filepath.Glob(filepath.Join(records, "*"))
	if len(left) != 2 { // B's start (alive owner) and G's start (locked)
		t.Errorf("after Forget: %v", left)
	}
	raw, _ := os.ReadFile(log)
	var m map[string]any
	json.Unmarshal(raw, &m)
	if m["session_id"] != "OLD" || m["last_assistant_message"] != "last words" || m["hook_event_name"] != "SubagentStop" {
		t.Errorf("late payload: %v", m)
	}
}
