package render

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/spawn"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txtar from the current encoding")

// The run the golden transcripts hold: the root says a word, calls an MCP
// tool, calls Agent (brood's Task) twice — one explore call that reads the README, one
// refused — then answers; the explore child's own transcript is on disk
// as a child writes it.
const (
	goldenTask = "01KBN5Q7MZ8XRTABCDEFGHJKMN"
	goldenCall = "toolu_root_1"
)

func goldenRun(t *testing.T, root string, stream bool) string {
	t.Helper()
	var out buf
	h := NewHeadless(&out, stream)
	h.Start(Info{SessionPath: filepath.Join(root, ".brood/sessions/01KBN5Q7MZ8XRTSESSIONSESS1.jsonl"), Cwd: root,
		Model: "anthropic/claude-opus-5-5", Tools: []string{"Read", "Task", "mcp__notes__echo"}, Agents: []string{"explore"}, PermissionMode: "default", Root: root, APIKeySource: "ANTHROPIC_API_KEY",
		MCPServers: []MCPServer{{Name: "notes", Status: "connected", Source: "dynamic"}}})
	u := &model.Usage{Input: 100, Output: 20}
	h.Event(agent.Event{Type: agent.EvTurn, Turn: 1})
	h.Event(agent.Event{Type: agent.EvText, Turn: 1, Text: "I will delegate this."})
	h.Event(agent.Event{Type: agent.EvUsage, Turn: 1, Usage: u, Total: u})
	h.Event(agent.Event{Type: agent.EvToolCall, Turn: 1, Tool: "mcp__notes__echo", ToolID: "toolu_root_mcp", Input: json.RawMessage(`{"text":"hi"}`)})
	h.Event(agent.Event{Type: agent.EvToolResult, Turn: 1, Tool: "mcp__notes__echo", ToolID: "toolu_root_mcp", Text: "echo: hi"})
	h.Event(agent.Event{Type: agent.EvToolCall, Turn: 1, Tool: "Task", ToolID: goldenCall,
		Input: json.RawMessage(`{"subagent_type":"Explore","description":"read the readme","prompt":"Say what README.md says."}`)})
	h.Event(agent.Event{Type: agent.EvToolCall, Turn: 1, Tool: "Task", ToolID: "toolu_root_2",
		Input: json.RawMessage(`{"subagent_type":"nobody","description":"nothing","prompt":"No such agent."}`)})
	h.Event(agent.Event{Type: agent.EvToolResult, Turn: 1, Tool: "Task", ToolID: "toolu_root_2", Text: `unknown subagent_type "nobody"`, IsError: true})
	h.DispatchEvent(spawn.Event{Type: "dispatch_start", TaskID: goldenTask, Agent: "explore", Depth: 1, Description: "read the readme"})
	recs := childTranscript()
	writeChildTranscript(t, root, recs[:4], "") // its first turn: a Read call, and its usage

	h.DispatchEvent(spawn.Event{Type: "usage", TaskID: goldenTask, Agent: "explore", Depth: 1, Usage: model.Usage{Input: 50, Output: 5}})
	h.DispatchEvent(spawn.Event{Type: "progress", TaskID: goldenTask, Agent: "explore", Depth: 1, Tools: []string{"Read"}})
	writeChildTranscript(t, root, recs[4:], "not json: a line a hostile child wrote\n{\"type\":\"message\",\"turn\":3") // the rest, and a partial line
	h.DispatchEvent(spawn.Event{Type: "dispatch_stop", TaskID: goldenTask, Agent: "explore", Depth: 1, Status: "done", WallMS: 240, Usage: model.Usage{Input: 110, Output: 12}})
	h.Event(agent.Event{Type: agent.EvToolResult, Turn: 1, Tool: "Task", ToolID: goldenCall, Text: "<subagent-result>The README is short.</subagent-result>"})
	h.Event(agent.Event{Type: agent.EvTurn, Turn: 2})
	h.Event(agent.Event{Type: agent.EvText, Turn: 2, Text: "Done."})
	h.Event(agent.Event{Type: agent.EvUsage, Turn: 2, Usage: u, Total: u})
	o := &agent.Outcome{Status: agent.StatusDone, Text: "Done.", Turns: 2, Usage: model.Usage{Input: 200, Output: 40}}
	h.Event(agent.Event{Type: agent.EvDone, Outcome: o})
	h.Done(o, filepath.Join(root, ".brood/sessions/01KBN5Q7MZ8XRTSESSIONSESS1.jsonl"), Totals{})
	return normalise(out.String(), root)
}

// childTranscript is the explore child's transcript, as a child writes
// it.
func childTranscript() []session.Record {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	return []session.Record{
		{Type: session.RecMeta, Time: at, Agent: "explore", Model: "anthropic/claude-haiku-4-5"},
		{Type: session.RecMessage, Time: at, Message: &model.Message{Role: model.RoleUser, Content: []model.Part{{Type: model.PartText, Text: "Say what README.md says."}}}},
		{Type: session.RecMessage, Time: at, Turn: 1, Message: &model.Message{Role: model.RoleAssistant, Content: []model.Part{{Type: model.PartToolUse, ID: "toolu_child_1", Name: "Read", Input: json.RawMessage(`{"file_path":"README.md"}`)}}}},
		{Type: session.RecUsage, Time: at, Turn: 1, Usage: &model.Usage{Input: 50, Output: 5}},
		{Type: session.RecMessage, Time: at, Turn: 1, Message: &model.Message{Role: model.RoleUser, Content: []model.Part{{Type: model.PartToolResult, ToolUseID: "toolu_child_1", Text: "1\t# Fixture\n"}}}},
		{Type: session.RecMessage, Time: at, Turn: 2, Message: &model.Message{Role: model.RoleAssistant, Content: []model.Part{{Type: model.PartText, Text: "The README is short."}}}},
		{Type: session.RecUsage, Time: at, Turn: 2, Usage: &model.Usage{Input: 60, Output: 7}},
	}
}

// writeChildTranscript appends recs (and then tail, as it is) to the
// explore child's transcript, and writes its result.
func writeChildTranscript(t *testing.T, root string, recs []session.Record, tail string) {
	t.Helper()
	dir := filepath.Join(root, ".brood", "dispatch", goldenTask)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range recs {
		line, _ := json.Marshal(r)
		b.Write(append(line, '\n'))
	}
	b.WriteString(tail)
	f, err := os.OpenFile(filepath.Join(dir, "session.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), []byte(`{"status":"done","summary":"The README is short."}`), 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	reUUID  = regexp.MustCompile(`"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"`)
	reMsgID = regexp.MustCompile(`"msg_[0-9a-f]{24}"`)
	reTime  = regexp.MustCompile(`"20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z"`)
	reMS    = regexp.MustCompile(`"(duration_ms|duration_api_ms|end_time)":[0-9]+`)
)

// normalise replaces what differs from run to run with placeholders, as
// the reference captures do: the same message id stays the same
// placeholder, so lines of one turn are seen to share it.
func normalise(s, root string) string {
	s = strings.ReplaceAll(s, root, "<root>")
	s = reUUID.ReplaceAllString(s, `"<uuid>"`)
	s = reTime.ReplaceAllString(s, `"<time>"`)
	s = reMS.ReplaceAllString(s, `"$1":<ms>`)
	ids := map[string]string{}
	return reMsgID.ReplaceAllStringFunc(s, func(m string) string {
		if ids[m] == "" {
			ids[m] = `"<msg-` + itoa(len(ids)+1) + `>"`
		}
		return ids[m]
	})
}

// TestStreamGolden: what --output-format stream-json and json write for
// a run with a subagent, line for line, against testdata/stream.txtar
// (go test ./internal/cli/render -run TestStreamGolden -update rewrites
// it). The subagent's start and end carry the Agent call's tool_use_id,
// its own messages are tagged with it, a refused call matches nothing.
func TestStreamGolden(t *testing.T) {
	path := filepath.Join("testdata", "stream.txtar")
	got := &txtar.Archive{
		Comment: []byte("stream-json and json output of one run with an explore subagent (TestStreamGolden).\nRegenerate with: go test ./internal/cli/render -run TestStreamGolden -update\n"),
		Files: []txtar.File{
			{Name: "stream-json.jsonl", Data: []byte(goldenRun(t, t.TempDir(), true))},
			{Name: "json.json", Data: []byte(goldenRun(t, t.TempDir(), false))},
		},
	}
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, txtar.Format(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Files) != len(got.Files) {
		t.Fatalf("%s has %d files, want %d (run with -update)", path, len(want.Files), len(got.Files))
	}
	for i, f := range got.Files {
		if w := want.Files[i]; w.Name != f.Name || string(w.Data) != string(f.Data) {
			t.Errorf("%s changed (run with -update if that is intended):\ngot:\n%s\nwant:\n%s", f.Name, f.Data, w.Data)
		}
	}
}
