package run_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/cli/clitest"
)

// streamLines parses stream-json output.
func streamLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var ls []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		ls = append(ls, m)
	}
	return ls
}

// TestIncludePartialMessages: --include-partial-messages adds Claude
// Code's stream events for each of the root's turns, in order: a status
// line, message_start, each block's start, deltas and stop (text as it
// streamed, a tool call's input as JSON), message_delta with the stop
// reason and message_stop; their deltas add up to the assistant lines,
// and api_message_id is the assistant lines' message id.
func TestIncludePartialMessages(t *testing.T) {
	p := clitest.NewProject(t)
	clitest.WriteFile(t, p.Root+"/a.txt", "alpha\n")
	mdl := p.Script("s.yaml", `agents:
  root:
    - tools: [{Read: {file_path: a.txt}}]
    - say: "It says alpha."
`)
	code, out, errOut := p.Brood("-p", "--model", mdl, "--output-format", "stream-json", "--include-partial-messages", "read a.txt")
	if code != 0 || strings.Contains(errOut, "accepted;") {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	var seq []string
	text, input := "", ""
	ids := map[string]bool{}
	for _, l := range streamLines(t, out) {
		switch l["type"] {
		case "system":
			seq = append(seq, "system/"+l["subtype"].(string))
		case "assistant":
			seq = append(seq, "assistant")
			ids[l["message"].(map[string]any)["id"].(string)] = true
		case "user", "result":
			seq = append(seq, l["type"].(string))
		case "stream_event":
			ev := l["event"].(map[string]any)
			k := ev["type"].(string)
			if !ids[l["api_message_id"].(string)] && k != "message_start" && k != "content_block_start" && k != "content_block_delta" {
				t.Errorf("%s names message %v, no assistant line's", k, l["api_message_id"])
			}
			switch k {
			case "content_block_start":
				k += ":" + ev["content_block"].(map[string]any)["type"].(string)
			case "content_block_delta":
				d := ev["delta"].(map[string]any)
				k += ":" + d["type"].(string)
				text += str(d["text"])
				input += str(d["partial_json"])
			case "message_delta":
				k += ":" + ev["delta"].(map[string]any)["stop_reason"].(string)
			}
			if k == "content_block_delta:text_delta" && seq[len(seq)-1] == k {
				continue // the text streams in as many deltas as the model sends
			}
			seq = append(seq, k)
		}
	}
	want := strings.Join([]string{
		"system/init", "system/status", "message_start", "content_block_start:tool_use",
		"content_block_delta:input_json_delta", "content_block_delta:input_json_delta", "assistant",
		"content_block_stop", "message_delta:tool_use", "message_stop", "user",
		"system/status", "message_start", "content_block_start:text", "content_block_delta:text_delta", "assistant",
		"content_block_stop", "message_delta:end_turn", "message_stop", "result",
	}, " ")
	if got := strings.Join(seq, " "); got != want {
		t.Errorf("lines:\n%s\nwant\n%s", got, want)
	}
	if text != "It says alpha." || input != `{"file_path":"a.txt"}` {
		t.Errorf("deltas: text %q, input %q", text, input)
	}
	// Without it, none; without stream-json, exit 1 as Claude Code.
	_, out, _ = p.Brood("-p", "--model", mdl, "--output-format", "stream-json", "read a.txt")
	if strings.Contains(out, "stream_event") || strings.Contains(out, `"status"`) {
		t.Errorf("stream events without the flag:\n%s", out)
	}
	code, _, errOut = p.Brood("-p", "--model", mdl, "--include-partial-messages", "read a.txt")
	if code != 1 || !strings.Contains(errOut, "--include-partial-messages requires --print and --output-format=stream-json") {
		t.Errorf("without stream-json: exit %d, stderr %s", code, errOut)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// TestReplayUserMessages: --replay-user-messages echoes each user message
// read on stdin right after the init line, content as given (a string or
// blocks), marked isReplay; without both stream-json formats it exits 1.
func TestReplayUserMessages(t *testing.T) {
	p := clitest.NewProject(t)
	spec := p.Script("s.yaml", echoScript)
	run := func(stdin string, args ...string) (int, string, string) {
		var out, errb clitest.SyncBuffer
		code := cli.Main(t.Context(), cli.IO{In: strings.NewReader(stdin), Out: &out, Err: &errb,
			Getenv: func(k string) string { return p.Env[k] }},
			append([]string{"-p", "--model", spec}, args...))
		return code, out.String(), errb.String()
	}
	in := `{"type":"user","message":{"role":"user","content":"Say"}}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hello"}]}}
`
	code, out, errOut := run(in, "--input-format", "stream-json", "--output-format", "stream-json", "--replay-user-messages")
	if code != 0 || strings.Contains(errOut, "accepted;") {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	ls := streamLines(t, out)
	if len(ls) < 3 {
		t.Fatalf("too few lines:\n%s", out)
	}
	for i, want := range []string{`"Say"`, `[{"text":"hello","type":"text"}]`} {
		l := ls[1+i]
		c, _ := json.Marshal(l["message"].(map[string]any)["content"])
		if l["type"] != "user" || l["isReplay"] != true || string(c) != want || l["session_id"] != ls[0]["session_id"] {
			t.Errorf("line %d: %v, want the user message %s replayed", i+2, l, want)
		}
	}
	for _, args := range [][]string{
		{"--output-format", "stream-json", "--replay-user-messages"},
		{"--input-format", "stream-json", "--output-format", "json", "--replay-user-messages"},
	} {
		code, _, errOut := run(in, args...)
		if code != 1 || !strings.Contains(errOut, "--replay-user-messages requires both --input-format=stream-json and --output-format=stream-json") {
			t.Errorf("%v: exit %d, stderr %s", args, code, errOut)
		}
	}
}
