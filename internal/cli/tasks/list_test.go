package tasks_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/shortid"
)

func TestTasksEmptyProject(t *testing.T) {
	p := clitest.NewProject(t)
	code, out, errOut := p.Brood("tasks")
	if want := "no dispatches yet in " + dispatch.Root(p.Root) + "\n"; code != 0 || out != want || errOut != "" {
		t.Errorf("code %d, stdout %q (want %q), stderr %q", code, out, want, errOut)
	}
	code, out, _ = p.Brood("tasks", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("--json: code %d, stdout %q", code, out)
	}
	code, out, _ = p.Brood("tasks", "prune", "--older-than", "1ns", "--json")
	if code != 0 || strings.Join(strings.Fields(out), "") != `{"pruned":[]}` {
		t.Errorf("prune --json: code %d, stdout %q", code, out)
	}
}

// TestTasksList: the table has a row per dispatch, newest first, with its
// shortest unique id prefix, agent, status, age, duration, tokens and description; --status filters
// (any case); --json has the same tasks without the bulky records.
func TestTasksList(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	done := p.DispatchOK("scout", "what is in the README?")
	partial := p.DispatchOK("stepper", "go")

	code, out, errOut := p.Brood("tasks")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ID AGENT STATUS AGE DURATION TOKENS DESCRIPTION" {
		t.Fatalf("table:\n%s", out)
	}
	list := p.ListJSON()
	tokens := map[string]string{}
	for _, item := range list {
		tokens[item["id"].(string)] = clitest.JSONNumber(item["tokens"])
		// The scout is a project agent that declares no sections: its
		// plain report draws no shape concern (internal/e2e's guardrail
		// tests cover a listing with concerns).
		if c, _ := item["concerns"].([]any); len(c) != 0 {
			t.Errorf("task %v has concerns %v", item["id"], item["concerns"])
		}
	}
	row := regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\S+)\s+(\d+(?:ms|\.\ds) ago)\s+(\d+(?:ms|\.\ds))\s+(\d+)\s+(.+)$`)
	for i, want := range []struct{ id, agent, status, desc string }{{partial, "stepper", "partial", "go"}, {done, "scout", "done", "what is in the README?"}} {
		m := row.FindStringSubmatch(lines[i+1])
		if m == nil {
			t.Errorf("row %d %q does not read ID AGENT STATUS AGE DURATION TOKENS DESCRIPTION", i+1, lines[i+1])
			continue
		}
		if m[1] != shortid.Prefix(want.id, []string{done, partial}) || m[2] != want.agent || m[3] != want.status || m[6] == "0" || m[6] != tokens[want.id] || m[7] != want.desc {
			t.Errorf("row %q, want %s %s %s with %s tokens", lines[i+1], want.id, want.agent, want.status, tokens[want.id])
		}
	}

	code, out, _ = p.Brood("tasks", "--status", "partial")
	if lines := strings.Split(strings.TrimRight(out, "\n"), "\n"); code != 0 || len(lines) != 2 || !strings.HasPrefix(partial, strings.Fields(lines[1])[0]) || strings.Join(strings.Fields(lines[1])[1:3], " ") != "stepper partial" {
		t.Errorf("--status partial: code %d\n%s", code, out)
	}
	if l := p.ListJSON("--status", "DONE"); len(l) != 1 || l[0]["id"] != done {
		t.Errorf("--status DONE --json: %v", l)
	}
	if l := p.ListJSON("--status", "killed"); len(l) != 0 {
		t.Errorf("--status killed --json: %v", l)
	}

	if len(list) != 2 || list[0]["id"] != partial || list[1]["id"] != done {
		t.Fatalf("--json: %v", list)
	}
	for _, item := range list {
		for _, k := range []string{"id", "dir", "agent", "status", "description", "created", "duration_ms", "tokens", "depth", "result"} {
			if _, ok := item[k]; !ok {
				t.Errorf("--json item lacks %q: %v", k, item)
			}
		}
		for _, k := range []string{"envelope", "output", "dispatch_log"} {
			if _, ok := item[k]; ok {
				t.Errorf("--json item carries %q", k)
			}
		}
		if item["dir"] != dispatch.Dir(p.Root, item["id"].(string)) || item["depth"] != 1.0 || item["description"] == "" || item["tokens"].(float64) <= 0 {
			t.Errorf("--json item %v", item)
		}
		res := item["result"].(map[string]any)
		if res["status"] != item["status"] {
			t.Errorf("result status %v, task status %v", res["status"], item["status"])
		}
		if u := res["usage"].(map[string]any); u["input"].(float64) <= 0 {
			t.Errorf("result usage %v", u)
		}
	}
	if h := list[0]["result"].(map[string]any)["resume_handle"]; h != partial {
		t.Errorf("the partial task's resume handle is %v", h)
	}
	if h, ok := list[1]["result"].(map[string]any)["resume_handle"]; ok {
		t.Errorf("the done task has a resume handle %v", h)
	}
}

// TestTasksWindow: the table shows the newest --last tasks (20 unless
// told) and says on stderr how many it hides; --all shows every one (main
// listed every task ever).
func TestTasksWindow(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	p.DispatchOK("scout", "what is in the README?")
	newest := p.DispatchOK("stepper", "go")
	code, out, errOut := p.Brood("tasks", "--last", "1")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(newest, strings.Fields(lines[1])[0]) ||
		errOut != "(1 older task(s) not shown: brood tasks --all lists every one)\n" {
		t.Errorf("--last 1: code %d, stdout\n%s\nstderr %q", code, out, errOut)
	}
	code, out, errOut = p.Brood("tasks", "--last", "1", "--all")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 3 || errOut != "" {
		t.Errorf("--all: code %d, stdout\n%s\nstderr %q", code, out, errOut)
	}
	if code, _, errOut = p.Brood("tasks", "--last", "0"); code == 0 || !strings.Contains(errOut, "--last 0: want 1 or more (or --all)") {
		t.Errorf("--last 0: code %d, stderr %q", code, errOut)
	}
}
