package childrun

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

// TestPickUpAnswer: a fleet call picked up at a model answer starts from
// the conversation up to that answer (without Replay's stand-in results)
// with the tool results that reached the transcript kept; a transcript
// that ends in a user turn, a follow-up prompt and a local resume are
// started as before.
func TestPickUpAnswer(t *testing.T) {
	user := model.Message{Role: model.RoleUser, Content: []model.Part{{Type: model.PartText, Text: "Begin"}}}
	uses := model.Message{Role: model.RoleAssistant, Content: []model.Part{
		{Type: model.PartToolUse, ID: "t1", Name: "Glob", Input: json.RawMessage(`{}`)},
		{Type: model.PartToolUse, ID: "t2", Name: "Glob", Input: json.RawMessage(`{}`)},
	}}
	final := model.Message{Role: model.RoleAssistant, Content: []model.Part{{Type: model.PartText, Text: "done"}}}
	results := model.Message{Role: model.RoleUser, Content: []model.Part{{Type: model.PartToolResult, ToolUseID: "t1", Text: "a"}, {Type: model.PartToolResult, ToolUseID: "t2", Text: "b"}}}
	msg := func(m model.Message) session.Record { return session.Record{Type: session.RecMessage, Message: &m} }
	fleet := &dispatch.Envelope{SyncTurns: true, Prompt: call.ContinuePrompt}
	for _, tc := range []struct {
		name   string
		env    *dispatch.Envelope
		recs   []session.Record
		msgs   int // messages of the history it starts from
		kept   []string
		picked bool
	}{
		{"tools half run", fleet, []session.Record{msg(user), msg(uses), {Type: session.RecToolResult, ToolID: "t1", Output: "a"}}, 2, []string{"t1"}, true},
		{"final answer", fleet, []session.Record{msg(user), msg(final)}, 2, nil, true},
		{"tool results in", fleet, []session.Record{msg(user), msg(uses), msg(results)}, 3, nil, false},
		{"a follow-up", &dispatch.Envelope{SyncTurns: true, Prompt: "and now?"}, []session.Record{msg(user), msg(final)}, 2, nil, false},
		{"local", &dispatch.Envelope{Prompt: call.ContinuePrompt}, []session.Record{msg(user), msg(uses)}, 3, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "session.jsonl")
			w, err := session.Open(path, session.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range tc.recs {
				if err := w.Append(r); err != nil {
					t.Fatal(err)
				}
			}
			w.Close()
			recs, _, _ := session.ReadFile(path)
			history, done := pickUpAnswer(tc.env, path, session.Replay(recs).Messages)
			if (done != nil) != tc.picked || len(history) != tc.msgs || len(done) != len(tc.kept) {
				t.Fatalf("history %d messages, kept %v; want %d, picked %v, kept %v", len(history), done, tc.msgs, tc.picked, tc.kept)
			}
			for _, id := range tc.kept {
				if done[id].ToolUseID != id {
					t.Errorf("kept result %s missing: %v", id, done)
				}
			}
			if tc.picked && history[len(history)-1].Role != model.RoleAssistant {
				t.Errorf("history ends with %s, want the answer", history[len(history)-1].Role)
			}
		})
	}
}
