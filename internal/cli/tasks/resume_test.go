package tasks_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
)

// TestTasksResume continues a task that stopped at its turn cap: same id,
// same directory, the transcript appended, the first run's records kept.
func TestTasksResume(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	id := p.DispatchOK("stepper", "go")
	dir := dispatch.Dir(p.Root, id)
	code, out, errOut := p.Brood("tasks", "resume", id, "carry", "on")
	if code != 0 {
		t.Fatalf("code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.HasPrefix(out, `<subagent-result task-id="`+id+`" agent="stepper" status="done" trust="untrusted"`) || !strings.Contains(out, "\nstep two, after: not run: the turn cap (1) was reached\n") {
		t.Errorf("resume output (the follow-up and the capped call's result must reach the model):\n%s", out)
	}
	if !strings.Contains(errOut, "[DISPATCH] task="+id+" agent=stepper") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if ids := clitest.TaskIDs(t, p.Root); len(ids) != 1 {
		t.Errorf("resume created a new task: %v", ids)
	}
	for _, f := range []string{"result.0.json", "output.0.json"} {
		if !dispatch.Exists(filepath.Join(dir, f)) {
			t.Errorf("the first run's %s was not kept", f)
		}
	}
	var first dispatch.Result
	clitest.ReadRecord(t, p.Root, id, "result.0.json", &first)
	if first.Status != dispatch.StatusPartial {
		t.Errorf("result.0.json status %q", first.Status)
	}
	var env dispatch.Envelope
	clitest.ReadRecord(t, p.Root, id, dispatch.EnvelopeFile, &env)
	if env.ResumeCount != 1 || env.Prompt != "carry on" || env.ResumePointer == "" {
		t.Errorf("envelope after resume: count %d, prompt %q, pointer %q", env.ResumeCount, env.Prompt, env.ResumePointer)
	}
	recs, _, err := session.ReadFile(filepath.Join(dir, dispatch.SessionFile))
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, r := range recs {
		if r.Type == session.RecEnd {
			runs = append(runs, r.Status)
		}
	}
	if strings.Join(runs, " ") != "partial done" {
		t.Errorf("transcript runs %v, want the partial run then the resumed one, appended", runs)
	}
	if st := clitest.ReplayValid(t, filepath.Join(dir, dispatch.SessionFile)); st.Turns != 2 {
		t.Errorf("transcript replays to %d turns", st.Turns)
	}
	code, out, _ = p.Brood("tasks", "log", id)
	if code != 0 || strings.Count(out, "═══ run of stepper") != 2 || !strings.Contains(out, "═══ partial after 1 turns") || !strings.Contains(out, "user: carry on") {
		t.Errorf("log after resume:\n%s", out)
	}
	if l := p.ListJSON(); len(l) != 1 || l[0]["status"] != "done" {
		t.Errorf("tasks after resume: %v", l)
	}

	// Again, as JSON: the outcome object.
	code, out, _ = p.Brood("tasks", "resume", "--json", id, "once more")
	vals := clitest.JSONValues(t, out)
	last := vals[len(vals)-1]
	res, _ := last["result"].(map[string]any)
	if code != 0 || last["task_id"] != id || res["status"] != "done" || res["task_id"] != id || !strings.Contains(last["text"].(string), `status="done"`) {
		t.Errorf("resume --json: code %d\n%s", code, out)
	}
	if vals[0]["type"] != "dispatch_start" || vals[0]["task_id"] != id {
		t.Errorf("resume --json events: %v", vals[0])
	}
	if !dispatch.Exists(filepath.Join(dir, "result.1.json")) {
		t.Error("the second run's result was not kept")
	}

	// Without a prompt a task of this project is not continued: resume
	// without one only lands a fleet call's change.
	code, out, errOut = p.Brood("tasks", "resume", id)
	if code != 2 || out != "" || !strings.Contains(errOut, "brood tasks resume "+id+" PROMPT") {
		t.Errorf("no prompt: code %d, stdout %q, stderr %q", code, out, errOut)
	}

	code, out, errOut = p.Brood("tasks", "resume", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "go on")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "brood: no task 01ARZ3NDEKTSV4RRFFQ69G5FAV under ") {
		t.Errorf("unknown id: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}
