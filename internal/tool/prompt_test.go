package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/model"
)

// TestPromptUpdatedInput: the permission prompt tool's updatedInput runs
// when it acts on the subject the prompt tool was asked about (its other
// fields may change); one that moves the call to another command, file or
// URL runs only if the rules allow that call as it is, and never past a
// deny rule or the configuration guard.
func TestPromptUpdatedInput(t *testing.T) {
	write := func(p, content string) string {
		b, _ := json.Marshal(map[string]string{"file_path": p, "content": content})
		return string(b)
	}
	tests := []struct {
		name         string
		allow, deny  []string
		tool, input  string
		answer       string // updatedInput ("": none)
		wantErr      string // "": the call runs
		wantFile     string // relative file that must then hold wantBody
		wantBody     string
		wantAbsent   string // relative file that must not exist
		configRooted bool
		hookAsked    bool // a PreToolUse hook asked about the call
		noPerms      bool
	}{
		{name: "same file, new content", tool: "Write", input: write("a.txt", "x"), answer: write("a.txt", "approved"),
			wantFile: "a.txt", wantBody: "approved"},
		{name: "same file spelled otherwise", tool: "Write", input: write("a.txt", "x"), answer: write("./sub/../a.txt", "approved"),
			wantFile: "a.txt", wantBody: "approved"},
		{name: "no updatedInput", tool: "Write", input: write("a.txt", "x"), wantFile: "a.txt", wantBody: "x"},
		{name: "another file the rules ask about", tool: "Write", input: write("a.txt", "x"), answer: write("b.txt", "y"),
			wantErr: "changed the Write call to one on another path", wantAbsent: "b.txt"},
		{name: "another file the rules allow", allow: []string{"Edit(b.txt)"}, tool: "Write", input: write("a.txt", "x"), answer: write("b.txt", "y"),
			wantFile: "b.txt", wantBody: "y", wantAbsent: "a.txt"},
		{name: "another file a rule denies", allow: []string{"Edit(b.txt)"}, deny: []string{"Edit(b.txt)"}, tool: "Write", input: write("a.txt", "x"), answer: write("b.txt", "y"),
			wantErr: `is refused (matched deny rule "Edit(b.txt)")`, wantAbsent: "b.txt"},
		{name: "configuration", allow: []string{"Edit(.brood/**)"}, configRooted: true, tool: "Write", input: write("a.txt", "x"), answer: write(".brood/settings.toml", "y"),
			wantErr: "brood's or Claude Code's configuration", wantAbsent: ".brood/settings.toml"},
		{name: "another command", tool: "Bash", input: `{"command":"touch a.txt"}`, answer: `{"command":"touch b.txt"}`,
			wantErr: "changed the Bash call to one on another command", wantAbsent: "b.txt"},
		{name: "another command the rules allow", allow: []string{"Bash(touch b.txt)"}, tool: "Bash", input: `{"command":"touch a.txt"}`, answer: `{"command":"touch b.txt"}`,
			wantFile: "b.txt", wantAbsent: "a.txt"},
		{name: "same command, new description", tool: "Bash", input: `{"command":"touch a.txt"}`, answer: `{"command":" touch a.txt","description":"ok"}`,
			wantFile: "a.txt"},
		{name: "another file the rules allow, a hook asked", allow: []string{"Edit(**)"}, hookAsked: true, tool: "Write", input: write("a.txt", "x"), answer: write("b.txt", "y"),
			wantErr: "a PreToolUse hook asked about the call as it was", wantAbsent: "b.txt"},
		{name: "same file, a hook asked", allow: []string{"Edit(**)"}, hookAsked: true, tool: "Write", input: write("a.txt", "x"), answer: write("a.txt", "y"),
			wantFile: "a.txt", wantBody: "y"},
		{name: "another command, no rules, a hook asked", noPerms: true, hookAsked: true, tool: "Bash", input: `{"command":"touch a.txt"}`, answer: `{"command":"touch b.txt"}`,
			wantErr: "changed the Bash call to one on another command", wantAbsent: "b.txt"},
		{name: "another URL", tool: "WebFetch", input: `{"url":"http://127.0.0.1:1/a","prompt":"p"}`, answer: `{"url":"http://127.0.0.1:1/b","prompt":"p"}`,
			wantErr: "changed the WebFetch call to one on another URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			perms, err := NewPermissions("default", tt.allow, tt.deny, nil)
			if err != nil {
				t.Fatal(err)
			}
			env := &Env{Dir: dir, Perms: perms, Prompt: func(_ context.Context, tool string, input json.RawMessage, _ string) (PromptAnswer, error) {
				if tool != tt.tool || string(input) != tt.input {
					t.Errorf("the prompt tool was asked about %s %s", tool, input)
				}
				return PromptAnswer{Allow: true, Input: json.RawMessage(tt.answer)}, nil
			}}
			if tt.configRooted {
				env.ConfigRoot = dir
			}
			if tt.noPerms {
				env.Perms = nil
			}
			if tt.hookAsked {
				env = env.WithHookVerdict(HookAsk)
			}
			res := NewSet(Builtins()...).Run(context.Background(), env, tt.tool, json.RawMessage(tt.input))
			if tt.wantErr == "" && res.IsError || tt.wantErr != "" && (!res.IsError || !strings.Contains(res.Content, tt.wantErr)) {
				t.Fatalf("result %q (error %v), want error %q", res.Content, res.IsError, tt.wantErr)
			}
			if tt.wantFile != "" {
				b, err := os.ReadFile(filepath.Join(dir, tt.wantFile))
				if err != nil || string(b) != tt.wantBody {
					t.Errorf("%s holds %q (%v), want %q", tt.wantFile, b, err, tt.wantBody)
				}
			}
			if tt.wantAbsent != "" {
				if _, err := os.Stat(filepath.Join(dir, tt.wantAbsent)); err == nil {
					t.Errorf("%s was written", tt.wantAbsent)
				}
			}
		})
	}
}

// lockProbe is a writing tool that reports, as it runs, which files' locks
// are held.
type lockProbe struct {
	set   *Set
	files []string
}

func (*lockProbe) Spec() model.ToolSpec { return (&Write{}).Spec() }
func (*lockProbe) ReadOnly() bool       { return false }
func (l *lockProbe) Run(_ context.Context, _ *Env, _ json.RawMessage) Result {
	var held []string
	for _, f := range l.files {
		if mu, ok := l.set.files.Load(f); ok {
			if !mu.(*sync.Mutex).TryLock() {
				held = append(held, filepath.Base(f))
				continue
			}
			mu.(*sync.Mutex).Unlock()
		}
	}
	return Result{Content: strings.Join(held, ",")}
}

// TestPromptHoldsTheWrittenFile: a writing call the prompt tool moves to
// another file runs holding that file's lock, not the one it asked about.
func TestPromptHoldsTheWrittenFile(t *testing.T) {
	dir := t.TempDir()
	probe := &lockProbe{files: []string{ResolveLinks(filepath.Join(dir, "a.txt")), ResolveLinks(filepath.Join(dir, "b.txt"))}}
	probe.set = NewSet(append(Builtins(), probe)...)
	perms, err := NewPermissions("default", []string{"Edit(b.txt)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Dir: dir, Perms: perms, Prompt: func(context.Context, string, json.RawMessage, string) (PromptAnswer, error) {
		return PromptAnswer{Allow: true, Input: json.RawMessage(`{"file_path":"b.txt","content":"y"}`)}, nil
	}}
	res := probe.set.Run(context.Background(), env, "Write", json.RawMessage(`{"file_path":"a.txt","content":"x"}`))
	if res.IsError || res.Content != "b.txt" {
		t.Fatalf("the locks held as the call ran: %q (error %v), want b.txt alone", res.Content, res.IsError)
	}
	for _, f := range probe.files {
		if mu, ok := probe.set.files.Load(f); ok && !mu.(*sync.Mutex).TryLock() {
			t.Errorf("%s is still locked after the call", f)
		}
	}
}
