package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
)

// subjectTree makes a workspace holding ok/ (nothing secret) and sec/s.txt
// (SECRET), returning the workspace and the two directories.
func subjectTree(t *testing.T) (ws, ok, sec string) {
	t.Helper()
	ws = t.TempDir()
	ok, sec = filepath.Join(ws, "ok"), filepath.Join(ws, "sec")
	for _, d := range []string{ok, sec} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ok, "o.txt"), []byte("nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sec, "s.txt"), []byte("SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, ok, sec
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSubjectIsTheToolsOwnField: a call is judged on the field the tool
// acts on. A stray file_path, notebook_path or differently cased key
// beside Grep's or LS's path, or an absolute Glob pattern that walks
// another directory than path, does not get the call past the deny and
// ask rules of the directory it reads.
func TestSubjectIsTheToolsOwnField(t *testing.T) {
	ws, ok, sec := subjectTree(t)
	tests := []struct {
		name      string
		deny, ask []string
		tool      string
		input     any
		wantErr   string // "": the call runs
	}{
		{name: "grep file_path past an ask rule", ask: []string{"Read(sec/**)"}, tool: "Grep",
			input: map[string]string{"pattern": "SECRET", "path": sec, "file_path": ok + "/o.txt"}, wantErr: `property "file_path" is not one of the tool's`},
		{name: "grep file_path past its deny rule", deny: []string{"Grep(sec/**)"}, tool: "Grep",
			input: map[string]string{"pattern": "SECRET", "path": sec, "file_path": ok}, wantErr: `property "file_path"`},
		{name: "grep notebook_path past its deny rule", deny: []string{"Grep(sec/**)"}, tool: "Grep",
			input: map[string]string{"pattern": "SECRET", "path": sec, "notebook_path": ok}, wantErr: `property "notebook_path"`},
		{name: "grep PATH past its deny rule", deny: []string{"Grep(sec/**)"}, tool: "Grep",
			input: map[string]string{"pattern": "SECRET", "PATH": sec}, wantErr: `property "PATH"`},
		{name: "grep its own path", deny: []string{"Grep(sec/**)"}, tool: "Grep",
			input: map[string]string{"pattern": "SECRET", "path": sec}, wantErr: `matched deny rule "Grep(sec/**)"`},
		{name: "ls file_path past its deny rule", deny: []string{"LS(sec/**)"}, tool: "LS",
			input: map[string]string{"path": sec, "file_path": ok}, wantErr: `property "file_path"`},
		{name: "glob absolute pattern past its deny rule", deny: []string{"Glob(sec/**)"}, tool: "Glob",
			input: map[string]string{"pattern": sec + "/*"}, wantErr: `matched deny rule "Glob(sec/**)"`},
		{name: "glob absolute pattern past a read ask rule", ask: []string{"Read(sec/**)"}, tool: "Glob",
			input: map[string]string{"pattern": sec + "/*", "path": ok}, wantErr: "needs approval"},
		{name: "glob absolute pattern with .. past its deny rule", deny: []string{"Glob(sec/**)"}, tool: "Glob",
			input: map[string]string{"pattern": ok + "/../sec/*"}, wantErr: `matched deny rule "Glob(sec/**)"`},
		{name: "glob absolute pattern with ..", tool: "Glob",
			input: map[string]string{"pattern": ok + "/../sec/*"}, wantErr: "has a .. element"},
		{name: "glob relative pattern with ..", tool: "Glob",
			input: map[string]string{"pattern": "../sec/*", "path": ok}, wantErr: "has a .. element"},
		{name: "grep elsewhere runs", deny: []string{"Grep(sec/**)"}, tool: "Grep",
			input: map[string]string{"pattern": "nothing", "path": ok}},
		{name: "glob absolute pattern elsewhere runs", deny: []string{"Glob(sec/**)"}, tool: "Glob",
			input: map[string]string{"pattern": ok + "/*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			perms, err := NewPermissions("default", nil, tt.deny, tt.ask)
			if err != nil {
				t.Fatal(err)
			}
			res := NewSet(Builtins()...).Run(context.Background(), &Env{Dir: ws, Perms: perms}, tt.tool, mustJSON(t, tt.input))
			if strings.Contains(res.Content, "s.txt") || strings.Contains(res.Content, "SECRET") {
				t.Fatalf("the call read sec: %q", res.Content)
			}
			if tt.wantErr == "" && res.IsError || tt.wantErr != "" && (!res.IsError || !strings.Contains(res.Content, tt.wantErr)) {
				t.Fatalf("result %q (error %v), want error %q", res.Content, res.IsError, tt.wantErr)
			}
		})
	}
}

// TestPromptSubjectIsTheToolsOwnField: the permission prompt tool asked
// about a search of one directory cannot turn it into a search of another
// by naming the first in a field the tool ignores, nor by an absolute Glob
// pattern.
func TestPromptSubjectIsTheToolsOwnField(t *testing.T) {
	ws, ok, sec := subjectTree(t)
	tests := []struct {
		name          string
		tool          string
		input, answer any
		wantErr       string // "": the call runs
	}{
		{name: "grep path moved, file_path kept", tool: "Grep",
			input:   map[string]string{"pattern": "SECRET", "path": ok},
			answer:  map[string]string{"pattern": "SECRET", "path": sec, "file_path": ok},
			wantErr: `updatedInput for Grep is invalid: property "file_path"`},
		{name: "grep path moved", tool: "Grep",
			input:   map[string]string{"pattern": "SECRET", "path": ok},
			answer:  map[string]string{"pattern": "SECRET", "path": sec},
			wantErr: "changed the Grep call to one on another path"},
		{name: "glob pattern moved", tool: "Glob",
			input:   map[string]string{"pattern": "*.txt", "path": ok},
			answer:  map[string]string{"pattern": sec + "/*.txt", "path": ok},
			wantErr: "changed the Glob call to one on another path"},
		{name: "grep same path, new pattern", tool: "Grep",
			input:  map[string]string{"pattern": "x", "path": ok},
			answer: map[string]string{"pattern": "nothing", "path": ok + "/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			perms, err := NewPermissions("default", nil, nil, []string{"Read"})
			if err != nil {
				t.Fatal(err)
			}
			asked := false
			env := &Env{Dir: ws, Perms: perms, Prompt: func(context.Context, string, json.RawMessage, string) (PromptAnswer, error) {
				asked = true
				return PromptAnswer{Allow: true, Input: mustJSON(t, tt.answer)}, nil
			}}
			res := NewSet(Builtins()...).Run(context.Background(), env, tt.tool, mustJSON(t, tt.input))
			if !asked {
				t.Fatal("the prompt tool was not asked")
			}
			if strings.Contains(res.Content, "s.txt") || strings.Contains(res.Content, "SECRET") {
				t.Fatalf("the call read sec: %q", res.Content)
			}
			if tt.wantErr == "" && res.IsError || tt.wantErr != "" && (!res.IsError || !strings.Contains(res.Content, tt.wantErr)) {
				t.Fatalf("result %q (error %v), want error %q", res.Content, res.IsError, tt.wantErr)
			}
		})
	}
}

// echoTool is a tool whose input schema is closed and that echoes its
// input.
type echoTool struct{ name string }

func (e *echoTool) Spec() model.ToolSpec {
	return model.ToolSpec{Name: e.name, Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`)}
}
func (*echoTool) ReadOnly() bool { return true }
func (*echoTool) Run(_ context.Context, _ *Env, input json.RawMessage) Result {
	return Result{Content: string(input)}
}

// TestUnknownKeys: a tool of brood's own refuses a key its closed schema
// does not list, naming it; an MCP tool's input is its server's to judge.
func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		tool    string
		wantErr string
	}{
		{tool: "Own", wantErr: `invalid input for Own: property "b" is not one of the tool's (a); leave it out`},
		{tool: "mcp__srv__echo"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := NewSet(&echoTool{tt.tool}).Run(context.Background(), &Env{Dir: t.TempDir()}, tt.tool, json.RawMessage(`{"a":"x","b":"y"}`))
			if tt.wantErr == "" && res.IsError || tt.wantErr != "" && (!res.IsError || !strings.Contains(res.Content, tt.wantErr)) {
				t.Fatalf("result %q (error %v), want error %q", res.Content, res.IsError, tt.wantErr)
			}
		})
	}
}
