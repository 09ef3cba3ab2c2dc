package providertest

import (
	"encoding/json"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/modeltest"
)

// ReadTool is the tool the providers' request tests offer the model.
func ReadTool() model.ToolSpec {
	return model.ToolSpec{
		Name: "Read", Description: "Reads a file.",
		Schema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`),
	}
}

// ReadCall is the model's call of ReadTool on path, under call id id.
func ReadCall(id, path string) model.Part {
	return model.Part{Type: model.PartToolUse, ID: id, Name: "Read", Input: json.RawMessage(`{"file_path":"` + path + `"}`)}
}

// SendOne streams req through m to srv, which must see exactly one
// request, and decodes that request's body into W (the part of the wire
// body a provider's test checks).
func SendOne[W any](t *testing.T, m model.Model, srv *modeltest.Server, req *model.Request) (W, modeltest.Recorded) {
	t.Helper()
	var w W
	if r := Stream(m, req); r.Err != nil {
		t.Fatalf("stream error: %v", r.Err)
	}
	recs := srv.Requests()
	if len(recs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(recs))
	}
	if err := json.Unmarshal(recs[0].Body, &w); err != nil {
		t.Fatal(err)
	}
	return w, recs[0]
}

// Conversation is a request of the providers' request tests: brood's
// system prompt, ReadTool, and these turns.
func Conversation(turns ...model.Message) *model.Request {
	return &model.Request{System: "You are brood.", Tools: []model.ToolSpec{ReadTool()}, Messages: turns}
}

// Must is an adapter built for a test, or the test's end.
func Must[M any](t *testing.T, m M, err error) M {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return m
}
