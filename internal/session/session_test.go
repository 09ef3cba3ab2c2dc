package session_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

func open(t *testing.T, path string, opts session.Options) *session.Writer {
	t.Helper()
	w, err := session.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func appendAll(t *testing.T, w *session.Writer, recs ...session.Record) {
	t.Helper()
	for _, r := range recs {
		if err := w.Append(r); err != nil {
			t.Fatalf("append %s: %v", r.Type, err)
		}
	}
}

func readFile(t *testing.T, path string) ([]session.Record, int) {
	t.Helper()
	recs, bad, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return recs, bad
}

func toolUse(id, name, input string) model.Part {
	return model.Part{Type: model.PartToolUse, ID: id, Name: name, Input: json.RawMessage(input)}
}

func toolResult(id, text string, isErr bool) model.Part {
	return model.Part{Type: model.PartToolResult, ToolUseID: id, Text: text, IsError: isErr}
}

func msg(role model.Role, parts ...model.Part) *model.Message {
	return &model.Message{Role: role, Content: parts}
}

func text(s string) model.Part { return model.Part{Type: model.PartText, Text: s} }

func TestAppendReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deep", "dir", "s.jsonl")
	clock := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	w := open(t, path, session.Options{Now: func() time.Time { return clock }})
	if w.Path() != path {
		t.Fatalf("Path() = %q, want %q", w.Path(), path)
	}
	want := []session.Record{
		{Type: session.RecMeta, Agent: "root", Model: "script:x", System: "sys"},
		{Type: session.RecMessage, Turn: 1, Message: msg(model.RoleUser, text("hi"))},
		{Type: session.RecMessage, Turn: 1, Message: msg(model.RoleAssistant, text("ok"), toolUse("t1", "LS", `{"path":"."}`))},
		{Type: session.RecUsage, Turn: 1, Usage: &model.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}},
		{Type: session.RecToolCall, Turn: 1, ToolID: "t1", Tool: "LS", Input: json.RawMessage(`{"path":"."}`)},
		{Type: session.RecToolResult, Turn: 1, ToolID: "t1", Tool: "LS", Output: "a\nb", IsError: true},
		{Type: session.RecSteer, Text: "focus"},
		{Type: session.RecEnd, Status: "done", Turn: 1, Time: clock.Add(time.Hour)},
	}
	appendAll(t, w, want...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(session.Record{Type: session.RecEnd}); err == nil {
		t.Error("Append after Close succeeded")
	}
	got, bad := readFile(t, path)
	if bad != 0 {
		t.Errorf("bad = %d, want 0", bad)
	}
	for i := range want {
		if want[i].Time.IsZero() {
			want[i].Time = clock
		}
	}
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.MarshalIndent(got, "", " ")
		wb, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("round trip differs:\ngot  %s\nwant %s", gb, wb)
	}
	data, _ := os.ReadFile(path)
	if n := bytes.Count(data, []byte("\n")); n != len(want) {
		t.Errorf("file has %d lines, want one per record (%d)", n, len(want))
	}
}

func TestTornTailIsSkippedAndHealed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w := open(t, path, session.Options{})
	appendAll(t, w,
		session.Record{Type: session.RecMeta, Agent: "root"},
		session.Record{Type: session.RecMessage, Message: msg(model.RoleUser, text("one"))},
		session.Record{Type: session.RecMessage, Message: msg(model.RoleAssistant, text(strings.Repeat("long answer ", 50)))},
	)
	w.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// A crash in the middle of the last write: cut the last record in half.
	if err := os.Truncate(path, st.Size()-300); err != nil {
		t.Fatal(err)
	}
	recs, bad := readFile(t, path)
	if len(recs) != 2 || bad != 1 {
		t.Fatalf("after tear: %d records, %d bad; want 2 and 1", len(recs), bad)
	}

	w2 := open(t, path, session.Options{})
	appendAll(t, w2, session.Record{Type: session.RecMessage, Message: msg(model.RoleAssistant, text("again"))})
	w2.Close()
	recs, bad = readFile(t, path)
	if len(recs) != 3 || bad != 1 {
		t.Fatalf("after heal and append: %d records, %d bad; want 3 and 1", len(recs), bad)
	}
	if got := recs[2].Message.Text(); got != "again" {
		t.Errorf("appended record reads %q", got)
	}
	st2 := session.Replay(recs)
	if len(st2.Messages) != 2 || st2.Messages[1].Text() != "again" || st2.Skipped != 0 {
		t.Errorf("replay after heal: %+v", st2.Messages)
	}

	// Opening a healthy file adds nothing.
	before, _ := os.ReadFile(path)
	open(t, path, session.Options{}).Close()
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("Open changed a file that ends in a newline")
	}
}

func TestReadSkipsGarbage(t *testing.T) {
	in := `{"type":"meta","time":"2025-01-01T00:00:00Z","agent":"a"}

not json
{"time":"2025-01-01T00:00:00Z"}
{"type":"end","time":"2025-01-01T00:00:00Z","status":"done"}
`
	recs, bad, err := session.Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || bad != 2 {
		t.Fatalf("got %d records, %d bad; want 2 and 2", len(recs), bad)
	}
}

func TestReplay(t *testing.T) {
	u := &model.Usage{Input: 10, Output: 5}
	base := []session.Record{
		{Type: session.RecMeta, Agent: "root", Model: "m1", System: "s1"},
		{Type: session.RecMessage, Message: msg(model.RoleUser, text("do it"))},
		{Type: session.RecMessage, Message: msg(model.RoleAssistant, text("looking"), toolUse("a", "Read", `{}`), toolUse("b", "Bash", `{}`), toolUse("c", "LS", `{}`))},
		{Type: session.RecUsage, Usage: u},
		{Type: session.RecToolCall, ToolID: "a"},
		{Type: session.RecToolCall, ToolID: "b"},
		{Type: session.RecToolCall, ToolID: "c"},
		{Type: session.RecToolResult, ToolID: "b", Output: "bash out"},
		{Type: session.RecToolResult, ToolID: "c", Output: "ls failed", IsError: true},
	}
	interrupted := toolResult("a", session.Interrupted, true)
	results := []model.Part{interrupted, toolResult("b", "bash out", false), toolResult("c", "ls failed", true)}

	tests := []struct {
		name   string
		recs   []session.Record
		want   []model.Message
		turns  int
		status string
		usage  model.Usage
	}{
		{
			name:  "killed mid-turn: recorded results kept, missing ones interrupted",
			recs:  base,
			want:  []model.Message{*base[1].Message, *base[2].Message, {Role: model.RoleUser, Content: results}},
			turns: 1, usage: *u,
		},
		{
			name: "finished run",
			recs: append(append([]session.Record(nil), base...),
				session.Record{Type: session.RecMessage, Message: msg(model.RoleUser, results...)},
				session.Record{Type: session.RecMessage, Message: msg(model.RoleAssistant, text("done"))},
				session.Record{Type: session.RecUsage, Usage: u},
				session.Record{Type: session.RecEnd, Status: "done"},
			),
			want: []model.Message{*base[1].Message, *base[2].Message,
				{Role: model.RoleUser, Content: results}, {Role: model.RoleAssistant, Content: []model.Part{text("done")}}},
			turns: 2, status: "done", usage: u.Add(*u),
		},
		{
			name: "resumed after a kill: the dangling calls are answered before the new prompt",
			recs: append(append([]session.Record(nil), base...),
				session.Record{Type: session.RecMeta, Agent: "root", Model: "m2", System: "s2"},
				session.Record{Type: session.RecMessage, Message: msg(model.RoleUser, text("go on"))},
				session.Record{Type: session.RecMessage, Message: msg(model.RoleAssistant, text("went on"))},
				session.Record{Type: session.RecEnd, Status: "done"},
			),
			want: []model.Message{*base[1].Message, *base[2].Message,
				{Role: model.RoleUser, Content: append(append([]model.Part(nil), results...), text("go on"))},
				{Role: model.RoleAssistant, Content: []model.Part{text("went on")}}},
			turns: 2, status: "done", usage: *u,
		},
		{
			name: "a started run that never finished has no status",
			recs: []session.Record{
				{Type: session.RecMeta}, {Type: session.RecEnd, Status: "partial"}, {Type: session.RecMeta},
				{Type: session.RecMessage, Message: msg(model.RoleUser, text("x"))},
				{Type: session.RecMessage},
			},
			want: []model.Message{*msg(model.RoleUser, text("x"))},
		},
		{
			name: "steering merges into the user turn",
			recs: []session.Record{
				{Type: session.RecMessage, Message: msg(model.RoleUser, text("a"))},
				{Type: session.RecSteer, Text: "b"},
				{Type: session.RecMessage, Message: msg(model.RoleUser, text("b"))},
			},
			want: []model.Message{*msg(model.RoleUser, text("a"), text("b"))},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := session.Replay(tc.recs)
			if !reflect.DeepEqual(st.Messages, tc.want) {
				gb, _ := json.MarshalIndent(st.Messages, "", " ")
				wb, _ := json.MarshalIndent(tc.want, "", " ")
				t.Fatalf("messages:\ngot  %s\nwant %s", gb, wb)
			}
			if st.Turns != tc.turns || st.Status != tc.status || st.Usage != tc.usage {
				t.Errorf("turns %d status %q usage %+v; want %d %q %+v", st.Turns, st.Status, st.Usage, tc.turns, tc.status, tc.usage)
			}
			checkValid(t, st.Messages)
		})
	}
	st := session.Replay(base)
	if st.System != "s1" || st.Agent != "root" || st.Model != "m1" {
		t.Errorf("meta: %q %q %q", st.System, st.Agent, st.Model)
	}
}

// checkValid fails unless msgs alternate roles and every tool_use is answered
// by the next message.
func checkValid(t *testing.T, msgs []model.Message) {
	t.Helper()
	for i, m := range msgs {
		if i > 0 && msgs[i-1].Role == m.Role {
			t.Errorf("messages %d and %d are both %s", i-1, i, m.Role)
		}
		uses := m.ToolUses()
		if len(uses) == 0 {
			continue
		}
		if i+1 >= len(msgs) {
			t.Errorf("message %d: tool calls without results at the end", i)
			continue
		}
		got := map[string]bool{}
		for _, p := range msgs[i+1].Content {
			if p.Type == model.PartToolResult {
				got[p.ToolUseID] = true
			}
		}
		for _, u := range uses {
			if !got[u.ID] {
				t.Errorf("message %d: tool_use %s has no result in the next message", i, u.ID)
			}
		}
	}
}

func TestAppendMessage(t *testing.T) {
	first := []model.Message{*msg(model.RoleUser, text("a"))}
	tests := []struct {
		name string
		in   []model.Message
		m    model.Message
		want []model.Message
	}{
		{"empty", nil, *msg(model.RoleUser, text("a")), []model.Message{*msg(model.RoleUser, text("a"))}},
		{"other role appends", first, *msg(model.RoleAssistant, text("b")),
			[]model.Message{*msg(model.RoleUser, text("a")), *msg(model.RoleAssistant, text("b"))}},
		{"same role merges", first, *msg(model.RoleUser, text("b"), text("c")),
			[]model.Message{*msg(model.RoleUser, text("a"), text("b"), text("c"))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := session.AppendMessage(tc.in, tc.m)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if len(first) != 1 || len(first[0].Content) != 1 || first[0].Text() != "a" {
		t.Errorf("AppendMessage changed its input: %+v", first)
	}
}

func TestRedactionCoversEveryTextField(t *testing.T) {
	const secret = "s3cr3t-value"
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w := open(t, path, session.Options{Redact: func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }})
	in := `{"command":"echo ` + secret + `"}`
	m := msg(model.RoleAssistant, text("key "+secret), toolUse("t", "Bash", in),
		model.Part{Type: model.PartThinking, Text: "thinking " + secret})
	appendAll(t, w,
		session.Record{Type: session.RecMeta, System: "system " + secret},
		session.Record{Type: session.RecMessage, Message: m},
		session.Record{Type: session.RecMessage, Message: msg(model.RoleUser, toolResult("t", "out "+secret, false))},
		session.Record{Type: session.RecToolCall, ToolID: "t", Input: json.RawMessage(in)},
		session.Record{Type: session.RecToolResult, ToolID: "t", Output: "out " + secret},
		session.Record{Type: session.RecSteer, Text: "steer " + secret},
		session.Record{Type: session.RecEnd, Text: "error " + secret},
	)
	w.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(secret)) {
		t.Fatalf("secret reached the transcript:\n%s", data)
	}
	// Eight redactions; the signed thinking block that held the secret is
	// left out whole (an edited one would be refused by the provider).
	if n := bytes.Count(data, []byte("[REDACTED]")); n != 8 || bytes.Contains(data, []byte(`"thinking"`)) {
		t.Errorf("%d redactions, want 8 and no thinking block:\n%s", n, data)
	}
	recs, bad := readFile(t, path)
	if len(recs) != 7 || bad != 0 {
		t.Fatalf("%d records, %d bad", len(recs), bad)
	}
	// The caller's message is not modified by redaction.
	if !strings.Contains(m.Content[0].Text, secret) {
		t.Error("redaction modified the caller's message")
	}
}
