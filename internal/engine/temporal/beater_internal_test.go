package temporal

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestAnswerHeld: a finished call's result heartbeat is left out only when
// the details the server has name its whole transcript (or all of it but
// the run's end record) and its whole change; anything else keeps it.
func TestAnswerHeld(t *testing.T) {
	const answer = `{"type":"message","turn":1,"message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}` + "\n" +
		`{"type":"usage","turn":1,"usage":{"input":5,"output":1}}` + "\n"
	const end = `{"type":"end","turn":1,"status":"done"}` + "\n"
	const usage = `{"type":"usage","turn":1,"usage":{"input":5,"output":1}}` + "\n"
	patch := &codesnap.Result{Tree: "t", Patch: &Ref{Key: "p", Size: 1, SHA256: "ab"}, Files: []string{"a"}}
	other := &codesnap.Result{Tree: "t", Patch: &Ref{Key: "q", Size: 1, SHA256: "cd"}, Files: []string{"a"}}
	patchJSON, _ := json.Marshal(patch)
	cases := []struct {
		name       string
		held, file string // the transcript the server has, the one the child left
		named      string // the one the last heartbeat names, if not file (its upload failed)
		heldCode   *codesnap.Result
		code       *codesnap.Result // the beater's (the last heartbeat's)
		result     []byte           // the call's change
		resultRef  bool             // the held details name a result already
		badPrefix  bool             // the held reference is to other bytes
		want       bool
	}{
		{name: "the whole transcript", held: answer, file: answer, want: true},
		{name: "all but the end record", held: answer, file: answer + end, want: true},
		{name: "a usage record after it", held: answer, file: answer + usage + end},
		{name: "other bytes before the end", held: answer, file: answer + end, badPrefix: true},
		{name: "a writer's whole change", held: answer, file: answer + end, heldCode: patch, code: patch, result: patchJSON, want: true},
		{name: "a change the server does not have", held: answer, file: answer + end, heldCode: other, code: patch, result: patchJSON},
		{name: "a change after the last heartbeat", held: answer, file: answer, heldCode: patch, code: patch, result: []byte(`{"tree":"t"}`)},
		{name: "a change lost at the end", held: answer, file: answer, heldCode: patch, code: patch},
		{name: "a result named already", held: answer, file: answer, resultRef: true},
		{name: "the answer's uploads failed", held: usage, named: usage, file: answer + end},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, id, td := newTaskDir(t)
			if err := os.WriteFile(td.File(taskdir.Session), []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			store := &DirStore{Dir: t.TempDir()}
			put := func(s string) Ref {
				ref, err := store.PutBytes(context.Background(), []byte(s))
				if err != nil {
					t.Fatal(err)
				}
				return ref
			}
			putT := func(s string, code *codesnap.Result) Ref {
				return put(string(TranscriptObjectWith(id, code, []byte(s))))
			}
			held := Heartbeat{TaskID: id, Worker: "w", Transcript: putT(tc.held, tc.heldCode), Position: int64(len(tc.held)), Code: tc.heldCode}
			if tc.badPrefix {
				bad := putT(tc.held[:len(tc.held)-2]+"x\n", tc.heldCode)
				held.Transcript.SHA256 = bad.SHA256
			}
			if tc.resultRef {
				held.Result = put("{}")
			}
			named := cmp.Or(tc.named, tc.file)
			hb := Heartbeat{TaskID: id, Worker: "w", Transcript: putT(named, tc.code), Position: int64(len(named)), Code: tc.code}
			b := &beater{a: &Activities{ProjectRoot: root}, id: id, code: tc.code}
			r := &call.Result{TaskID: id, Status: dispatch.StatusDone, Code: tc.result}
			if got := b.changeHeld(r) && b.answerHeld(held, hb); got != tc.want {
				t.Errorf("held: %v; want %v", got, tc.want)
			}
		})
	}
}

// TestContinuationTakesTheServersTranscript: a call continued on a worker
// that holds the task's records continues from the transcript the server's
// heartbeat names, whether this worker's is behind it (another worker took
// the call further after this one was stopped) or ahead of it (a turn that
// never reached its boundary); one that matches is left as it is.
func TestContinuationTakesTheServersTranscript(t *testing.T) {
	const turn1 = `{"type":"message","turn":1,"message":{"role":"assistant","content":[{"type":"text","text":"one"}]}}` + "\n"
	const turn2 = `{"type":"message","turn":2,"message":{"role":"assistant","content":[{"type":"text","text":"two"}]}}` + "\n"
	cases := []struct{ name, local, server string }{
		{"behind the server's", turn1, turn1 + turn2},
		{"ahead of the server's", turn1 + turn2, turn1},
		{"the server's", turn1 + turn2, turn1 + turn2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, id, td := newTaskDir(t)
			if err := td.WriteFile(taskdir.Envelope, []byte(`{}`), false); err != nil {
				t.Fatal(err)
			}
			if err := td.WriteFile(taskdir.Session, []byte(tc.local), false); err != nil {
				t.Fatal(err)
			}
			store := &DirStore{Dir: t.TempDir()}
			ref, err := store.PutBytes(t.Context(), TranscriptObject(id, []byte(tc.server)))
			if err != nil {
				t.Fatal(err)
			}
			a := &Activities{ProjectRoot: root, Store: store}
			spec, cleanup, err := a.continuation(t.Context(), call.Spec{}, Heartbeat{TaskID: id, Worker: "w2", Transcript: ref, Position: int64(len(tc.server))}, false, false)
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			if spec.Resume != id || !spec.Continue {
				t.Fatalf("spec resumes %q (continue %v); want task %s continued in place", spec.Resume, spec.Continue, id)
			}
			if b, err := td.ReadFile(taskdir.Session, 0); err != nil || string(b) != tc.server {
				t.Fatalf("the task's transcript is %q (%v); want the server's %q", b, err, tc.server)
			}
		})
	}
}

// newTaskDir is a new task's directory in a project of its own.
func newTaskDir(t *testing.T) (root, id string, td *taskdir.Dir) {
	t.Helper()
	root, id = t.TempDir(), dispatch.NewID()
	td, err := taskdir.Open(root).Task(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := td.Create(); err != nil {
		t.Fatal(err)
	}
	return root, id, td
}
