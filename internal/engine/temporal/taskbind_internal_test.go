package temporal

import (
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestTaskOfRun: a plan's call names only a task its run named, in the one
// spelling brood writes.
func TestTaskOfRun(t *testing.T) {
	at := time.Now()
	own := PlanTaskID("R1", at, 3)
	cases := []struct {
		name, id, want string // want "" accepted
	}{
		{"the run's task", own, ""},
		{"the run's task of another execution", PlanTaskID("R1", at.Add(time.Hour), 0), ""},
		{"another run's task", PlanTaskID("R2", at, 3), "not one plan run R1 named"},
		{"a task of no run", dispatch.NewID(), "not one plan run R1 named"},
		{"the run's task in lower case", strings.ToLower(own), "is not a task id"},
		{"no task id", "../../etc", "is not a task id"},
		{"none", "", "is not a task id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := taskOfRun("R1", tc.id)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !isUnbound(err)):
				t.Fatalf("got %v, want refused saying %q", err, tc.want)
			}
		})
	}
}

// TestTranscriptOf: a transcript object from the store is the task's only
// when its first line is the one a worker writes for that task, and what
// follows it is the child's transcript as it was.
func TestTranscriptOf(t *testing.T) {
	id, other := dispatch.NewID(), dispatch.NewID()
	raw := `{"type":"meta","agent":"explore"}` + "\n" + `{"type":"message","turn":1}` + "\n"
	cases := []struct {
		name, obj, want string // want "" accepted
	}{
		{"its own", string(TranscriptObject(id, []byte(raw))), ""},
		{"its own, empty", string(TranscriptObject(id, nil)), ""},
		{"another task's", string(TranscriptObject(other, []byte(raw))), "is task " + other + "'s"},
		{"no first line of a worker's", raw, "names no task"},
		{"empty", "", "names no task"},
		{"its first line alone, unended", strings.TrimSuffix(string(TranscriptObject(id, nil)), "\n"), "does not start with the line"},
		{"the task named in other words", `{"task_id":"` + id + `","type":"fleet_task"}` + "\n" + raw, "does not start with the line"},
		{"the task named with more", `{"type":"fleet_task","task_id":"` + id + `","run":"R9"}` + "\n" + raw, "does not start with the line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := transcriptOf(id, Ref{Key: "sha256/x"}, []byte(tc.obj))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && string(got) != strings.TrimPrefix(tc.obj, string(headOf(id))):
				t.Fatalf("got %q, want the child's transcript", got)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !isUnbound(err)):
				t.Fatalf("got %v, want refused saying %q", err, tc.want)
			}
		})
	}
}

// TestSyncTakesOnlyItsTasksTranscript: a worker that has the task's
// records makes its transcript the server's only when that is the task's:
// another task's is refused and the task's own transcript left as it was.
func TestSyncTakesOnlyItsTasksTranscript(t *testing.T) {
	const mine = `{"type":"message","turn":1}` + "\n"
	const theirs = `{"type":"message","turn":1,"message":{"role":"user","content":[{"type":"text","text":"secret"}]}}` + "\n"
	root, id, td := newTaskDir(t)
	if err := td.WriteFile(taskdir.Envelope, []byte(`{}`), false); err != nil {
		t.Fatal(err)
	}
	if err := td.WriteFile(taskdir.Session, []byte(mine), false); err != nil {
		t.Fatal(err)
	}
	store := &DirStore{Dir: t.TempDir()}
	ref, err := store.PutBytes(t.Context(), TranscriptObject(dispatch.NewID(), []byte(theirs)))
	if err != nil {
		t.Fatal(err)
	}
	a := &Activities{ProjectRoot: root, Store: store}
	_, _, err = a.continuation(t.Context(), call.Spec{}, Heartbeat{TaskID: id, Transcript: ref, Position: int64(len(theirs))}, false, false)
	if err == nil || !isUnbound(err) || !strings.Contains(err.Error(), "and the call continues task "+id) {
		t.Fatalf("got %v; want another task's transcript refused", err)
	}
	if b, _ := td.ReadFile(taskdir.Session, 0); string(b) != mine {
		t.Fatalf("the task's transcript became %q", b)
	}
}
