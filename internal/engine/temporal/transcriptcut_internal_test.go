package temporal

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestRetryWithNoDetailsCutsAWritersTranscript: a retry with no heartbeat
// details (none of the call's beats reached the server) that continues a
// writer's task in place, in a copy rebuilt from the snapshot alone, cuts
// the transcript back to before its first tool call: the copy has none of
// the edits the tools made in the dead attempt's copy. A read-only agent's
// transcript (by the worker's own agent definitions, not by the envelope
// its child can rewrite), a call in the worker's own checkout, one the
// server's details name a transcript for, and a resume are left as they
// are.
func TestRetryWithNoDetailsCutsAWritersTranscript(t *testing.T) {
	const (
		answer = `{"type":"message","turn":1,"message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Write","input":{}}]}}` + "\n" +
			`{"type":"usage","turn":1,"usage":{"input":5,"output":1}}` + "\n"
		tools = `{"type":"tool_call","turn":1,"tool_id":"t1","tool":"Write"}` + "\n" +
			`{"type":"tool_result","turn":1,"tool_id":"t1","output":"wrote a.txt"}` + "\n" +
			`{"type":"message","turn":2,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"wrote a.txt"}]}}` + "\n"
	)
	cases := []struct {
		name     string
		readOnly bool // by the worker's agent definitions
		// envelopeReadOnly: the task's envelope says read_only, as a
		// child rewriting its own directory could make it say.
		envelopeReadOnly bool
		copied           bool
		resume           bool
		server           bool // the server's details name a transcript (the answer)
		want             string
	}{
		{name: "a writer in a copy", copied: true, want: answer},
		{name: "a read-only agent", copied: true, readOnly: true, want: answer + tools},
		{name: "a writer whose envelope says read-only", copied: true, envelopeReadOnly: true, want: answer},
		{name: "the worker's own checkout", want: answer + tools},
		{name: "a resume", copied: true, resume: true, want: answer + tools},
		{name: "details with a transcript", copied: true, server: true, want: answer},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, id, td := newTaskDir(t)
			env := `{"task_id":"` + id + `","read_only":false}`
			if tc.envelopeReadOnly {
				env = `{"task_id":"` + id + `","read_only":true}`
			}
			if err := td.WriteFile(taskdir.Envelope, []byte(env), false); err != nil {
				t.Fatal(err)
			}
			if err := td.WriteFile(taskdir.Session, []byte(answer+tools), false); err != nil {
				t.Fatal(err)
			}
			store := &DirStore{Dir: t.TempDir()}
			hb := Heartbeat{TaskID: id}
			if tc.server {
				ref, err := store.PutBytes(t.Context(), TranscriptObject(id, []byte(answer)))
				if err != nil {
					t.Fatal(err)
				}
				hb.Transcript, hb.Position = ref, int64(len(answer))
			}
			spec := call.Spec{TaskID: id, Agent: "scout", Prompt: "brief"}
			if tc.resume {
				spec = call.Spec{Resume: id, Continue: true}
			}
			a := &Activities{ProjectRoot: root, Store: store, Code: &CodeSite{ReadOnly: func(agent string) bool { return tc.readOnly && agent == "scout" }}}
			got, cleanup, err := a.continuation(t.Context(), spec, hb, false, tc.copied && !a.readOnly(spec))
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			if got.Resume != id || !got.Continue {
				t.Fatalf("spec resumes %q (continue %v); want task %s continued in place", got.Resume, got.Continue, id)
			}
			if b, err := td.ReadFile(taskdir.Session, 0); err != nil || string(b) != tc.want {
				t.Errorf("transcript %q (%v); want %q", b, err, tc.want)
			}
		})
	}
}

// TestAsked: a follow-up is in a transcript once a user message follows
// the point the resumed run started at; its start record alone is not it.
func TestAsked(t *testing.T) {
	const (
		old  = `{"type":"message","turn":1,"message":{"role":"user","content":[{"type":"text","text":"Begin"}]}}` + "\n"
		meta = `{"type":"meta","agent":"explore"}` + "\n"
		user = `{"type":"message","turn":1,"message":{"role":"user","content":[{"type":"text","text":"one more thing"}]}}` + "\n"
	)
	cases := []struct {
		name, data string
		at         int
		want       bool
	}{
		{"only the earlier run's", old, len(old), false},
		{"the resumed run's start", old + meta, len(old), false},
		{"the follow-up", old + meta + user, len(old), true},
		{"a run that never got going", meta + user, 0, true},
		{"past the end", old, len(old) + 1, false},
	}
	for _, tc := range cases {
		if got := asked([]byte(tc.data), int64(tc.at)); got != tc.want {
			t.Errorf("%s: asked %v; want %v", tc.name, got, tc.want)
		}
	}
}

// TestFollowUpOnce: where a call continued from this worker's records
// with no transcript on the server sends its follow-up. Its first attempt
// records the transcript's length; a later attempt of the same call cuts
// the transcript back to it (what the dead attempt appended, its copy of
// the follow-up first, goes); another call's record (an earlier resume)
// is replaced, and nothing is touched for a call that sends no follow-up,
// one the server names a transcript for, or a task with no records here.
func TestFollowUpOnce(t *testing.T) {
	const (
		before   = `{"type":"message","turn":1,"message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}` + "\n"
		appended = `{"type":"meta","agent":"explore"}` + "\n" +
			`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"one more thing"}]}}` + "\n"
	)
	this := followUpRecord{Workflow: "brood-call-x", Run: "run-2", Activity: "1"}
	earlier := followUpRecord{Workflow: "brood-call-x", Run: "run-1", Activity: "1", At: 3}
	cases := []struct {
		name       string
		mark       *followUpRecord // the record already there (nil: none)
		noEnvelope bool
		server     bool // the server's details name a transcript
		followUp   bool
		want       string // the transcript after
		wantAt     int64  // the record's At after (-1: no record of this call)
	}{
		{name: "first attempt", followUp: true, want: before + appended, wantAt: int64(len(before + appended))},
		{name: "a retry", mark: &followUpRecord{Workflow: this.Workflow, Run: this.Run, Activity: this.Activity, At: int64(len(before))}, followUp: true, want: before, wantAt: int64(len(before))},
		{name: "an earlier resume's record", mark: &earlier, followUp: true, want: before + appended, wantAt: int64(len(before + appended))},
		{name: "no follow-up", mark: &followUpRecord{Workflow: this.Workflow, Run: this.Run, Activity: this.Activity, At: 1}, want: before + appended, wantAt: 1},
		{name: "a transcript on the server", followUp: true, server: true, want: before + appended, wantAt: -1},
		{name: "no records here", followUp: true, noEnvelope: true, want: before + appended, wantAt: -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, id, td := newTaskDir(t)
			if !tc.noEnvelope {
				if err := td.WriteFile(taskdir.Envelope, []byte(`{"task_id":"`+id+`"}`), false); err != nil {
					t.Fatal(err)
				}
			}
			if err := td.WriteFile(taskdir.Session, []byte(before+appended), false); err != nil {
				t.Fatal(err)
			}
			if tc.mark != nil {
				if err := td.WriteJSON(followUpMark, tc.mark, false); err != nil {
					t.Fatal(err)
				}
			}
			hb := Heartbeat{TaskID: id}
			if tc.server {
				hb.Transcript = Ref{Key: "sha256/00/00", Size: 1, SHA256: strings.Repeat("0", 64)}
			}
			a := &Activities{ProjectRoot: root}
			if err := a.followUpOnce(this, id, hb, tc.followUp); err != nil {
				t.Fatal(err)
			}
			got, err := td.ReadFile(taskdir.Session, 0)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("transcript of %d bytes after; want %d", len(got), len(tc.want))
			}
			var mark followUpRecord
			at := int64(-1)
			if td.ReadJSON(followUpMark, &mark) == nil && mark.Run == this.Run {
				at = mark.At
			}
			if at != tc.wantAt {
				t.Errorf("this call's record says %d; want %d", at, tc.wantAt)
			}
		})
	}
}
