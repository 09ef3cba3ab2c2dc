package tasks_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestTasksShow: the text view is for a person (status, agent, brief,
// times, tokens, the start of the result); --json has every record; an
// unknown id is a clear error.
func TestTasksShow(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	id := p.DispatchOK("scout", "what is in the README?")
	code, out, errOut := p.Brood("tasks", "show", id)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	head := "task     " + id + "\nagent    scout\nstatus   done\nbrief    what is in the README?\ncreated  "
	if !strings.HasPrefix(out, head) {
		t.Errorf("show does not start with\n%s\ngot:\n%s", head, out)
	}
	parts := []string{"\ntook     ", "\ntimes    queued ", " for a pool slot, ran ", "\ntokens   ", " in, ", " out)\ndir      " + dispatch.Dir(p.Root, id) + "\n", "\nresult (done):\n  The README says:", "\nevery record (envelope, result, output, dispatch log): brood tasks show " + id + " --json\n"}
	last := 0
	for _, w := range parts {
		i := strings.Index(out[last:], w)
		if i < 0 {
			t.Errorf("show lacks %q (in this order):\n%s", w, out)
			continue
		}
		last += i
	}
	// A human view: no raw records, no system prompt (main dumped them).
	for _, bad := range []string{`"prompt":`, "── envelope", "system_prompt", "{\n"} {
		if strings.Contains(out, bad) {
			t.Errorf("show prints %q:\n%s", bad, out)
		}
	}

	code, out, _ = p.Brood("tasks", "show", "--json", id)
	var task map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &task) != nil {
		t.Fatalf("--json: code %d\n%s", code, out)
	}
	env, _ := task["envelope"].(map[string]any)
	res, _ := task["result"].(map[string]any)
	o, _ := task["output"].(map[string]any)
	lg, _ := task["dispatch_log"].(map[string]any)
	if task["id"] != id || task["status"] != "done" || task["agent"] != "scout" || env["target_agent"] != "scout" || env["prompt"] != "what is in the README?" ||
		res["status"] != "done" || !strings.Contains(res["summary"].(string), "The README says:") || o["exit_code"] != 0.0 || lg["task_id"] != id || lg["pid"] != o["pid"] {
		t.Errorf("--json: %s", out)
	}

	code, out, errOut = p.Brood("tasks", "show", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	if want := "brood: no task 01ARZ3NDEKTSV4RRFFQ69G5FAV under " + dispatch.Root(p.Root) + " (brood tasks --all lists this project's)\n"; code != 1 || out != "" || errOut != want {
		t.Errorf("unknown id: code %d, stdout %q, stderr %q, want %q", code, out, errOut, want)
	}
}
