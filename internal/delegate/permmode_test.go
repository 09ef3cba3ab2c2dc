package delegate

import (
	"os"
	"syscall"
	"testing"
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

// TestTranscriptCallsNeverHangs: a transcript the child replaced with a FIFO
// or a link is not read (and the open does not wait for a writer).
func TestTranscriptCallsNeverHangs(t *testing.T) {
	dir := t.TempDir()
	fifo := dir + "/session.jsonl"
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if calls := transcriptCalls(fifo); calls != nil {
		t.Fatalf("a FIFO yielded calls: %v", calls)
	}
	link := dir + "/link.jsonl"
	if err := os.Symlink("/etc/passwd", link); err != nil {
		t.Fatal(err)
	}
	if calls := transcriptCalls(link); calls != nil {
		t.Fatalf("a link was followed: %v", calls)
	}
}
