package spawn

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/taskdir"
)

func TestChildMode(t *testing.T) {
	tests := []struct {
		def, parent, want string
		note              bool
	}{
		{def: "", parent: "acceptEdits", want: "acceptEdits"},
		{def: "acceptEdits", parent: "default", want: "acceptEdits"},
		{def: "acceptEdits", parent: "", want: "acceptEdits"},
		{def: "acceptEdits", parent: "bypassPermissions", want: "acceptEdits"},
		{def: "acceptEdits", parent: "plan", want: "plan", note: true},
		{def: "acceptEdits", parent: "dontAsk", want: "dontAsk", note: true},
		{def: "bypassPermissions", parent: "default", want: "default", note: true},
		{def: "bypassPermissions", parent: "acceptEdits", want: "acceptEdits", note: true},
		{def: "bypassPermissions", parent: "bypassPermissions", want: "bypassPermissions"},
		{def: "plan", parent: "bypassPermissions", want: "plan"},
		{def: "dontAsk", parent: "default", want: "dontAsk"},
		{def: "default", parent: "plan", want: "plan", note: true},
		{def: "sideways", parent: "default", want: "default", note: true},
	}
	for _, tt := range tests {
		got, note := childMode(tt.def, tt.parent)
		if got != tt.want || (note != "") != tt.note {
			t.Errorf("childMode(%q, %q) = %q, %q; want %q (note %v)", tt.def, tt.parent, got, note, tt.want, tt.note)
		}
	}
}

// TestTranscriptCallsNeverHangs: the guards read a child's transcript only
// as a regular file beneath the task directory: a FIFO in its place does not
// hang the open, and a link (at the file, or at the task directory on the
// way) is not followed. A real transcript is read.
func TestTranscriptCallsNeverHangs(t *testing.T) {
	root := t.TempDir()
	proj := taskdir.Open(root)
	td := proj.MustTask(taskdir.NewID())
	if err := td.Create(); err != nil {
		t.Fatal(err)
	}
	transcript := `{"type":"tool_call","tool_id":"t1","tool":"Bash","input":{"command":"go test ./..."}}` + "\n"
	if err := os.WriteFile(td.File(taskdir.Session), []byte(transcript), 0o644); err != nil {
		t.Fatal(err)
	}
	if calls, _ := transcriptCalls(td); len(calls) != 1 || calls[0].Command != "go test ./..." {
		t.Fatalf("a real transcript: calls %+v, want the one Bash call", calls)
	}
	// The task directory itself swapped for a link to one with a transcript.
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, taskdir.Session), []byte(transcript), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := proj.MustTask(taskdir.NewID())
	if err := os.Symlink(elsewhere, linked.Path()); err != nil {
		t.Fatal(err)
	}
	if calls, _ := transcriptCalls(linked); calls != nil {
		t.Fatalf("a linked task directory was followed: %v", calls)
	}
	for name, plant := range map[string]func(string) error{
		"fifo": func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"link": func(p string) error { return os.Symlink(filepath.Join(elsewhere, taskdir.Session), p) },
	} {
		_ = os.Remove(td.File(taskdir.Session))
		if err := plant(td.File(taskdir.Session)); err != nil {
			t.Fatal(err)
		}
		if calls, _ := transcriptCalls(td); calls != nil {
			t.Errorf("%s: yielded calls %v", name, calls)
		}
	}
}

// TestTranscriptCallsTakeWhatRan: a call whose input a PreToolUse hook
// replaced is judged by the input that ran (on its result record), not by
// the model's.
func TestTranscriptCallsTakeWhatRan(t *testing.T) {
	td := taskdir.Open(t.TempDir()).MustTask(taskdir.NewID())
	if err := td.Create(); err != nil {
		t.Fatal(err)
	}
	transcript := `{"type":"tool_call","tool_id":"t1","tool":"Bash","input":{"command":"go test ./..."}}` + "\n" +
		`{"type":"tool_result","tool_id":"t1","tool":"Bash","input":{"command":"go test -short ./..."},"output":"ok"}` + "\n"
	if err := os.WriteFile(td.File(taskdir.Session), []byte(transcript), 0o644); err != nil {
		t.Fatal(err)
	}
	if calls, _ := transcriptCalls(td); len(calls) != 1 || calls[0].Command != "go test -short ./..." || calls[0].Result != "ok" {
		t.Fatalf("calls %+v, want the one Bash call as it ran", calls)
	}
}

// TestTrustedModel: a project agent file's model — a script (a program
// of the repository's), an alias, a model id, provider/model — is read as
// inherit, with a note naming the file and `brood trust`, until the user
// trusts the project, as the project settings' model is; a user's agent's
// and a trusted project's are kept, and inherit ("") is no choice.
func TestTrustedModel(t *testing.T) {
	for _, c := range []struct {
		name    string
		source  registry.Source
		trusted bool
		model   string
		want    string
		note    bool
	}{
		{"untrusted project script", registry.SourceProject, false, "script:.brood/x.yaml", "", true},
		{"trusted project script", registry.SourceProject, true, "script:.brood/x.yaml", "script:.brood/x.yaml", false},
		{"user's script", registry.SourceUser, false, "script:/x.yaml", "script:/x.yaml", false},
		{"untrusted project provider", registry.SourceProject, false, "openai/gpt-5", "", true},
		{"untrusted project alias", registry.SourceProject, false, "opus", "", true},
		{"untrusted project model id", registry.SourceProject, false, "claude-opus-4-1", "", true},
		{"untrusted project inherit", registry.SourceProject, false, "", "", false},
		{"trusted project provider", registry.SourceProject, true, "openai/gpt-5", "openai/gpt-5", false},
		{"trusted project alias", registry.SourceProject, true, "opus", "opus", false},
		{"user's alias", registry.SourceUser, false, "opus", "opus", false},
		{"built-in's alias", registry.SourceBuiltin, false, "haiku", "haiku", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &Dispatcher{cfg: Config{TrustProject: func(string) bool { return c.trusted }}}
			got, note := d.trustedModel(&registry.Definition{Name: "a", Path: "a.md", Source: c.source, Model: c.model})
			if got != c.want || (note != "") != c.note || (c.note && (!strings.Contains(note, "a.md") || !strings.Contains(note, "brood trust"))) {
				t.Errorf("trustedModel = %q %q; want %q (note %v, naming a.md and brood trust)", got, note, c.want, c.note)
			}
		})
	}
}
