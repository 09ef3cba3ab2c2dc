package protocol

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/broodhq/brood/internal/model"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txtar from the current encoding")

// transcript is one dispatch as both ends see it: every kind, both ways.
func transcript() (up, down []Message) {
	u := model.Usage{Input: 120, Output: 30, CacheRead: 1000}
	up = []Message{
		Started{TaskID: "01JABCDEFGHJKMNPQRSTVWXYZ0", PID: 4242},
		Ping{},
		Progress{Tools: []string{"Read", "Grep", "Bash"}},
		ToolCall{Seq: 1, Tool: "Bash", Command: "go test ./..."},
		ToolCall{Seq: 1, Tool: "Bash", Ended: true, IsError: true, Output: "--- FAIL: TestX\nExit code 1"},
		ToolCall{Seq: 2, Tool: "Write", Path: "notes.md"},
		ToolCall{Seq: 2, Tool: "Write", Ended: true, IsError: true, Refused: true, Output: "permission denied: Write \"notes.md\" needs approval"},
		Usage{Turn: 1, Usage: u, Total: u},
		BudgetWarning{Text: "8000 of 10000 budget tokens used"},
		Ask{ID: "ask-1", TaskID: "01JABCDEFGHJKMNPQRSTVWXYZ0", Agent: "general-purpose", Tool: "Bash", Subject: "rm -rf build", Rules: []string{"Bash(rm:*)"}},
		Ask{ID: "ask-2", TaskID: "01JABCDEFGHJKMNPQRSTVWXYZ1", Agent: "explore", Via: []string{"01JABCDEFGHJKMNPQRSTVWXYZ0"}, Tool: "Write", Subject: "notes.md"},
		Hook{ID: "hook-1", Event: HookPreToolUse, TaskID: "01JABCDEFGHJKMNPQRSTVWXYZ0", Agent: "general-purpose", Depth: 1, Tool: "Bash", ToolUseID: "toolu_1", Input: json.RawMessage(`{"command":"make deploy"}`), Mode: "default"},
		Hook{ID: "hook-2", Event: HookPostToolUse, TaskID: "01JABCDEFGHJKMNPQRSTVWXYZ1", Agent: "explore", Depth: 2, Via: []string{"01JABCDEFGHJKMNPQRSTVWXYZ0"}, Tool: "Read", ToolUseID: "toolu_2", Input: json.RawMessage(`{"file_path":"README.md"}`), Response: &ToolResponse{Content: "# Sample"}, DurationMS: 3},
		Hook{ID: "hook-5", Event: HookPostToolUse, TaskID: "01JABCDEFGHJKMNPQRSTVWXYZ0", Agent: "general-purpose", Depth: 1, Tool: "Write", ToolUseID: "toolu_3", Input: json.RawMessage(`{}`), Failed: &HookFailure{Command: "jq -r .tool_input.file_path >> ~/hooks.log", Line: "/bin/sh: 1: cannot create /home/u/hooks.log: Permission denied"}},
		Turn{ID: "turn-1", Turn: 2},
		Nested{Event: Event{Type: EvDispatchStart, TaskID: "01JABCDEFGHJKMNPQRSTVWXYZ1", Agent: "explore", Depth: 2, MaxDepth: 2}},
		Nested{Event: Event{Type: EvBudgetExceeded, TaskID: "01JABCDEFGHJKMNPQRSTVWXYZ1", Agent: "explore", Depth: 2, Text: "10500 of 10000 budget tokens used"}},
		BudgetExceeded{Text: "10400 of 10000 budget tokens used"},
		Result{Status: "done", Usage: u, ChildUsage: model.Usage{Input: 7, Output: 3}},
	}
	down = []Message{
		Answer{ID: "ask-1", Allow: false},
		Answer{ID: "ask-2", Allow: true, Always: true, Wrote: []ConfigWrite{{Path: ".brood/settings.local.toml", Data: []byte("[permissions]\nallow = [\"Write(notes.md)\"]\n"), Perm: 0o644}}},
		HookReply{ID: "hook-1", Deny: "blocked by a PreToolUse hook: no deploys from a subagent"},
		HookReply{ID: "hook-2", Context: "README.md is generated; edit docs/readme.tmpl"},
		HookReply{ID: "hook-3", Verdict: "allow", Input: json.RawMessage(`{"command":"make deploy --dry-run"}`)},
		HookReply{ID: "hook-4", Run: &HookRun{Event: HookPostToolUse, Payload: json.RawMessage(`{"cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Write"}`),
			Commands: []HookCommand{{Command: "./scripts/fmt.sh", TimeoutMS: 60000, Pins: []HookPin{{Path: "scripts/fmt.sh", Sum: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}}}}},
		TurnReply{ID: "turn-1"},
	}
	return up, down
}

func encodeAll(t *testing.T, ms []Message) []byte {
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, m := range ms {
		if err := w.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func TestGoldenTranscript(t *testing.T) {
	const path = "testdata/transcript.txtar"
	up, down := transcript()
	got := &txtar.Archive{
		Comment: []byte("One dispatch on the wire: up is the child's stdout, down its stdin.\nRegenerate with: go test ./internal/protocol -update\n"),
		Files:   []txtar.File{{Name: "up.jsonl", Data: encodeAll(t, up)}, {Name: "down.jsonl", Data: encodeAll(t, down)}},
	}
	if *update {
		if err := os.WriteFile(path, txtar.Format(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range want.Files {
		if f.Name != got.Files[i].Name || !bytes.Equal(f.Data, got.Files[i].Data) {
			t.Errorf("%s changed on the wire (run with -update if that is intended):\ngot:\n%s\nwant:\n%s", f.Name, got.Files[i].Data, f.Data)
		}
	}
	// Both ends read the golden lines back into the same values.
	for i, msgs := range [][]Message{up, down} {
		var back []Message
		for m, err := range Read(bytes.NewReader(want.Files[i].Data)) {
			if err != nil {
				t.Fatal(err)
			}
			back = append(back, m)
		}
		if !reflect.DeepEqual(back, msgs) {
			t.Errorf("%s: decoded %#v\nwant %#v", want.Files[i].Name, back, msgs)
		}
	}
}

func TestUnmarshalEdges(t *testing.T) {
	cases := []struct {
		line string
		want Message
		err  bool
	}{
		{`{"ping":true}`, Ping{}, false},
		{`{"type":"from_the_future","x":1}`, Unknown{Type: "from_the_future", Raw: json.RawMessage(`{"type":"from_the_future","x":1}`)}, false},
		{`not json`, nil, true},
		{`{"type":"progress","tools":"Read"}`, nil, true},
	}
	for _, c := range cases {
		got, err := Unmarshal([]byte(c.line))
		if (err != nil) != c.err || (!c.err && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("Unmarshal(%s) = %#v, %v", c.line, got, err)
		}
	}
}

func TestReadGoesOnAfterABadLine(t *testing.T) {
	in := strings.NewReader("garbage\n\n{\"type\":\"progress\",\"tools\":[\"Read\"]}\n")
	var msgs []Message
	var errs int
	for m, err := range Read(in) {
		if err != nil {
			errs++
			continue
		}
		msgs = append(msgs, m)
	}
	if errs != 1 || len(msgs) != 1 || msgs[0].Kind() != KindProgress {
		t.Fatalf("got %v with %d errors", msgs, errs)
	}
}
