package temporal

import (
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
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
	id, otherTask := dispatch.NewID(), dispatch.NewID()
	raw := `{"type":"meta","agent":"explore"}` + "\n" + `{"type":"message","turn":1}` + "\n"
	change := &codesnap.Result{Tree: strings.Repeat("ab", 20), Patch: &Ref{Key: "sha256/cd/" + strings.Repeat("cd", 32), Size: 9, SHA256: strings.Repeat("cd", 32)}}
	other := *change
	other.Patch = &Ref{Key: "sha256/ef/" + strings.Repeat("ef", 32), Size: 9, SHA256: strings.Repeat("ef", 32)}
	cases := []struct {
		name, obj string
		code      *codesnap.Result // the partial change the call continues from
		want      string           // "" accepted
	}{
		{"its own, with its change", string(TranscriptObjectWith(id, change, []byte(raw))), change, ""},
		{"its own, with another change", string(TranscriptObjectWith(id, change, []byte(raw))), &other, "is not the one uploaded with task"},
		{"its own, uploaded with no change", string(TranscriptObject(id, []byte(raw))), change, "is not the one uploaded with task"},
		{"its own, its change left out", string(TranscriptObjectWith(id, change, []byte(raw))), nil, ""},
		{"its own", string(TranscriptObject(id, []byte(raw))), nil, ""},
		{"its own, empty", string(TranscriptObject(id, nil)), nil, ""},
		{"another task's", string(TranscriptObject(otherTask, []byte(raw))), nil, "is task " + otherTask + "'s"},
		{"no first line of a worker's", raw, nil, "names no task"},
		{"empty", "", nil, "names no task"},
		{"its first line alone, unended", strings.TrimSuffix(string(TranscriptObject(id, nil)), "\n"), nil, "does not start with the line"},
		{"the task named in other words", `{"task_id":"` + id + `","type":"fleet_task"}` + "\n" + raw, nil, "does not start with the line"},
		{"the task named with more", `{"type":"fleet_task","task_id":"` + id + `","run":"R9"}` + "\n" + raw, nil, "does not start with the line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := transcriptOf(id, tc.code, Ref{Key: "sha256/x"}, []byte(tc.obj))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && string(got) != tc.obj[strings.Index(tc.obj, "\n")+1:]:
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
