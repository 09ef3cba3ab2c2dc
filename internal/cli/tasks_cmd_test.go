package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
)

// dispatchOK runs `brood subagent` in-process and returns the new task's id.
func (p *project) dispatchOK(agent, prompt string) string {
	p.t.Helper()
	before := taskIDs(p.t, p.root)
	code, out, errOut := p.brood("subagent", agent, prompt)
	if code != 0 {
		p.t.Fatalf("subagent %s: code %d\nstdout:\n%s\nstderr:\n%s", agent, code, out, errOut)
	}
	for _, id := range taskIDs(p.t, p.root) {
		if !slices.Contains(before, id) {
			return id
		}
	}
	p.t.Fatalf("subagent %s left no new task", agent)
	return ""
}

// broodWithin is brood (in-process) cancelled after d: a dispatch that
// hangs fails the test instead of stalling it.
func (p *project) broodWithin(d time.Duration, args ...string) (code int, stdout, stderr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.t.Context(), d)
	defer cancel()
	var out, errb syncBuffer
	code = cli.Main(ctx, cli.IO{
		In: strings.NewReader(""), Out: &out, Err: &errb,
		Getenv: func(k string) string { return p.env[k] },
	}, args)
	return code, out.String(), errb.String()
}

// waitTranscript waits until a record of task id's transcript satisfies ok.
func (p *project) waitTranscript(id, what string, ok func(session.Record) bool) {
	p.t.Helper()
	path := filepath.Join(dispatch.Dir(p.root, id), dispatch.SessionFile)
	waitFor(p.t, what, func() bool {
		recs, _, _ := session.ReadFile(path)
		return slices.ContainsFunc(recs, ok)
	})
}

// listJSON is `brood tasks --json [args]`, decoded.
func (p *project) listJSON(args ...string) []map[string]any {
	p.t.Helper()
	code, out, errOut := p.brood(append([]string{"tasks", "--json"}, args...)...)
	if code != 0 {
		p.t.Fatalf("tasks --json: code %d, stderr %q", code, errOut)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		p.t.Fatalf("tasks --json is not a JSON array (%v):\n%s", err, out)
	}
	return list
}

func TestTasksEmptyProject(t *testing.T) {
	p := newProject(t)
	code, out, errOut := p.brood("tasks")
	if want := "no dispatches yet in " + dispatch.Root(p.root) + "\n"; code != 0 || out != want || errOut != "" {
		t.Errorf("code %d, stdout %q (want %q), stderr %q", code, out, want, errOut)
	}
	code, out, _ = p.brood("tasks", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("--json: code %d, stdout %q", code, out)
	}
	code, out, _ = p.brood("tasks", "prune", "--older-than", "1ns", "--json")
	if code != 0 || strings.Join(strings.Fields(out), "") != `{"pruned":[]}` {
		t.Errorf("prune --json: code %d, stdout %q", code, out)
	}
}

// TestTasksList: the table has a row per dispatch, newest first, with its
// agent, status, age, duration, tokens and description; --status filters
// (any case); --json has the same tasks without the bulky records.
func TestTasksList(t *testing.T) {
	p := newDispatchProject(t, true)
	done := p.dispatchOK("scout", "what is in the README?")
	partial := p.dispatchOK("stepper", "go")

	code, out, errOut := p.brood("tasks")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ID AGENT STATUS AGE DURATION TOKENS DESCRIPTION" {
		t.Fatalf("table:\n%s", out)
	}
	list := p.listJSON()
	tokens := map[string]string{}
	for _, item := range list {
		tokens[item["id"].(string)] = jsonNumber(item["tokens"])
	}
	row := regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\S+)\s+(\d+(?:ms|\.\ds) ago)\s+(\d+(?:ms|\.\ds))\s+(\d+)\s+(.+)$`)
	for i, want := range []struct{ id, agent, status, desc string }{{partial, "stepper", "partial", "go"}, {done, "scout", "done", "what is in the README?"}} {
		m := row.FindStringSubmatch(lines[i+1])
		if m == nil {
			t.Errorf("row %d %q does not read ID AGENT STATUS AGE DURATION TOKENS DESCRIPTION", i+1, lines[i+1])
			continue
		}
		if m[1] != want.id || m[2] != want.agent || m[3] != want.status || m[6] == "0" || m[6] != tokens[want.id] || m[7] != want.desc {
			t.Errorf("row %q, want %s %s %s with %s tokens", lines[i+1], want.id, want.agent, want.status, tokens[want.id])
		}
	}

	code, out, _ = p.brood("tasks", "--status", "partial")
	if lines := strings.Split(strings.TrimRight(out, "\n"), "\n"); code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], partial+"  stepper  partial") {
		t.Errorf("--status partial: code %d\n%s", code, out)
	}
	if l := p.listJSON("--status", "DONE"); len(l) != 1 || l[0]["id"] != done {
		t.Errorf("--status DONE --json: %v", l)
	}
	if l := p.listJSON("--status", "killed"); len(l) != 0 {
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
		if item["dir"] != dispatch.Dir(p.root, item["id"].(string)) || item["depth"] != 1.0 || item["description"] == "" || item["tokens"].(float64) <= 0 {
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

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTasksShow prints every record of a task, as text and as JSON; an
// unknown id is a clear error.
func TestTasksShow(t *testing.T) {
	p := newDispatchProject(t, true)
	id := p.dispatchOK("scout", "what is in the README?")
	code, out, errOut := p.brood("tasks", "show", id)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	head := "task     " + id + "\nagent    scout\nstatus   done\ndir      " + dispatch.Dir(p.root, id) + "\n"
	if !strings.HasPrefix(out, head) {
		t.Errorf("show does not start with\n%s\ngot:\n%s", head, out)
	}
	sections := []string{"\n── envelope\n{", `"prompt": "what is in the README?"`, "\n── result\n{", `"written_by": "child"`, "\n── output\n{", `"killed_by": "none"`, "\n── dispatch log\n{", `"complexity":`}
	last := 0
	for _, w := range sections {
		i := strings.Index(out[last:], w)
		if i < 0 {
			t.Errorf("show lacks %q (in this order):\n%s", w, out)
			continue
		}
		last += i
	}
	if strings.Contains(out, ": none") {
		t.Errorf("a finished task shows a missing record:\n%s", out)
	}

	code, out, _ = p.brood("tasks", "show", "--json", id)
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

	code, out, errOut = p.brood("tasks", "show", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	if want := "brood: no task 01ARZ3NDEKTSV4RRFFQ69G5FAV under " + dispatch.Root(p.root) + " (see `brood tasks`)\n"; code != 1 || out != "" || errOut != want {
		t.Errorf("unknown id: code %d, stdout %q, stderr %q, want %q", code, out, errOut, want)
	}
}

// TestTasksLog prints the child's transcript readably (and raw with --json).
func TestTasksLog(t *testing.T) {
	p := newDispatchProject(t, true)
	id := p.dispatchOK("scout", "what is in the README?")
	code, out, errOut := p.brood("tasks", "log", id)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	ts := `\d\d:\d\d:\d\d`
	want := []string{
		ts + ` ═══ run of scout on script:` + regexp.QuoteMeta(filepath.Join(p.root, ".brood", "script.yaml")),
		ts + ` user: Begin: what is in the README\?`,
		ts + ` assistant: Reading the README\.`,
		ts + ` assistant → Read \{"file_path":"README\.md"\}`,
		ts + `   ✓ Read: 1\s+# Sample`,
		ts + ` assistant: The README says:`,
		ts + ` ═══ done after 2 turns`,
	}
	rest := out
	for _, w := range want {
		loc := regexp.MustCompile(`(?m)^` + w).FindStringIndex(rest)
		if loc == nil {
			t.Errorf("log lacks a line matching %q (in this order):\n%s", w, out)
			continue
		}
		rest = rest[loc[1]:]
	}

	code, out, _ = p.brood("tasks", "log", "--json", id)
	var recs []session.Record
	if code != 0 || json.Unmarshal([]byte(out), &recs) != nil {
		t.Fatalf("--json: code %d\n%s", code, out)
	}
	var types []string
	for _, r := range recs {
		types = append(types, string(r.Type))
	}
	if got := strings.Join(types, " "); !strings.HasPrefix(got, "meta message") || !strings.Contains(got, "tool_call tool_result") || !strings.HasSuffix(got, "end") {
		t.Errorf("--json record types: %s", got)
	}

	code, out, errOut = p.brood("tasks", "log", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "brood: task 01ARZ3NDEKTSV4RRFFQ69G5FAV has no transcript") {
		t.Errorf("unknown id: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestTasksOutputFinished: a finished task's status and wrapped result, as
// text and JSON; an unknown id is a clear error.
func TestTasksOutputFinished(t *testing.T) {
	p := newDispatchProject(t, true)
	id := p.dispatchOK("stepper", "go")
	code, out, errOut := p.brood("tasks", "output", id)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	for _, w := range []string{"status: partial\n<subagent-result task-id=\"" + id + "\" agent=\"stepper\" status=\"partial\" trust=\"untrusted\"", "\nstep one\n</subagent-result>\n", "resume_task_id=\"" + id + "\""} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	code, out, _ = p.brood("tasks", "output", "--json", id)
	var v map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || len(v) != 3 || v["task_id"] != id || v["status"] != "partial" || !strings.HasPrefix(v["output"], "<subagent-result task-id=\""+id+"\"") {
		t.Errorf("--json: code %d\n%s", code, out)
	}
	// --wait on a finished task returns at once.
	code, out, _ = p.brood("tasks", "output", "--wait", id)
	if code != 0 || !strings.HasPrefix(out, "status: partial\n") {
		t.Errorf("--wait on a finished task: code %d\n%s", code, out)
	}
	code, out, errOut = p.brood("tasks", "output", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "brood: no task 01ARZ3NDEKTSV4RRFFQ69G5FAV under ") {
		t.Errorf("unknown id: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestTasksResume continues a task that stopped at its turn cap: same id,
// same directory, the transcript appended, the first run's records kept.
func TestTasksResume(t *testing.T) {
	p := newDispatchProject(t, true)
	id := p.dispatchOK("stepper", "go")
	dir := dispatch.Dir(p.root, id)
	code, out, errOut := p.brood("tasks", "resume", id, "carry", "on")
	if code != 0 {
		t.Fatalf("code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.HasPrefix(out, `<subagent-result task-id="`+id+`" agent="stepper" status="done" trust="untrusted"`) || !strings.Contains(out, "\nstep two, after: not run: the turn cap (1) was reached\n") {
		t.Errorf("resume output (the follow-up and the capped call's result must reach the model):\n%s", out)
	}
	if !strings.Contains(errOut, "[DISPATCH] task="+id+" agent=stepper") {
		t.Errorf("stderr:\n%s", errOut)
	}
	if ids := taskIDs(t, p.root); len(ids) != 1 {
		t.Errorf("resume created a new task: %v", ids)
	}
	for _, f := range []string{"result.0.json", "output.0.json"} {
		if !dispatch.Exists(filepath.Join(dir, f)) {
			t.Errorf("the first run's %s was not kept", f)
		}
	}
	var first dispatch.Result
	readRecord(t, p.root, id, "result.0.json", &first)
	if first.Status != dispatch.StatusPartial {
		t.Errorf("result.0.json status %q", first.Status)
	}
	var env dispatch.Envelope
	readRecord(t, p.root, id, dispatch.EnvelopeFile, &env)
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
	if st := replayValid(t, filepath.Join(dir, dispatch.SessionFile)); st.Turns != 2 {
		t.Errorf("transcript replays to %d turns", st.Turns)
	}
	code, out, _ = p.brood("tasks", "log", id)
	if code != 0 || strings.Count(out, "═══ run of stepper") != 2 || !strings.Contains(out, "═══ partial after 1 turns") || !strings.Contains(out, "user: carry on") {
		t.Errorf("log after resume:\n%s", out)
	}
	if l := p.listJSON(); len(l) != 1 || l[0]["status"] != "done" {
		t.Errorf("tasks after resume: %v", l)
	}

	// Again, as JSON: the outcome object.
	code, out, _ = p.brood("tasks", "resume", "--json", id, "once more")
	vals := jsonValues(t, out)
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

	code, out, errOut = p.brood("tasks", "resume", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "go on")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "brood: no task 01ARZ3NDEKTSV4RRFFQ69G5FAV under ") {
		t.Errorf("unknown id: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestTasksPrune deletes finished tasks older than the limit and keeps
// running ones; without --older-than it refuses.
func TestTasksPrune(t *testing.T) {
	p := newDispatchProject(t, true)
	a := p.dispatchOK("scout", "what is in the README?")
	b := p.dispatchOK("stepper", "go")
	parent := p.start(nil, "subagent", "--background", "sleeper", "think")
	running := p.runningTaskAmong(3)

	code, out, errOut := p.brood("tasks", "prune")
	if code != 1 || out != "" || errOut != "brood: prune needs --older-than, e.g. --older-than 168h\n" {
		t.Errorf("no --older-than: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = p.brood("tasks", "prune", "--older-than", "1h")
	if code != 0 || out != "pruned 0 dispatch(es) older than 1h0m0s\n" || len(taskIDs(t, p.root)) != 3 {
		t.Errorf("--older-than 1h: code %d, stdout %q, tasks %v", code, out, taskIDs(t, p.root))
	}
	code, out, _ = p.brood("tasks", "prune", "--older-than", "1ns")
	if code != 0 || out != "pruned 2 dispatch(es) older than 1ns\n" {
		t.Errorf("--older-than 1ns: code %d, stdout %q", code, out)
	}
	if ids := taskIDs(t, p.root); len(ids) != 1 || ids[0] != running {
		t.Errorf("after prune: %v, want only the running %s (pruned %s %s)", ids, running, a, b)
	}
	code, out, _ = p.brood("tasks", "prune", "--json", "--older-than", "1ns")
	if code != 0 || strings.Join(strings.Fields(out), "") != `{"pruned":[]}` {
		t.Errorf("prune --json with only a running task: code %d, stdout %q", code, out)
	}

	// Stop the sleeper; once finished, it is pruned too.
	if code, _, errOut := p.brood("tasks", "kill", running); code != 0 {
		t.Fatalf("kill: %s", errOut)
	}
	// The parent of a task stopped by `tasks kill` reports it: 130 for
	// cancelled, 1 for killed.
	if code := parent.wait(t); code != 130 && code != 1 {
		t.Errorf("the background parent exited %d: %s", code, parent.stderr.String())
	}
	code, out, _ = p.brood("tasks", "prune", "--json", "--older-than", "1ns")
	if code != 0 || strings.Join(strings.Fields(out), "") != `{"pruned":["`+running+`"]}` {
		t.Errorf("prune --json: code %d, stdout %q", code, out)
	}
	if _, err := os.Stat(dispatch.Dir(p.root, running)); !os.IsNotExist(err) {
		t.Errorf("the pruned task's directory is still there: %v", err)
	}
}

// runningTaskAmong waits until the project has n tasks, one of them running,
// and returns that one's id.
func (p *project) runningTaskAmong(n int) string {
	p.t.Helper()
	var id string
	waitFor(p.t, "a running task", func() bool {
		list := p.listJSON()
		if len(list) != n {
			return false
		}
		for _, item := range list {
			if item["status"] == dispatch.StatusRunning {
				id = item["id"].(string)
				return true
			}
		}
		return false
	})
	return id
}

// TestTasksKill stops a running child that another brood process started in
// the background: its process is gone, it is listed as cancelled with its
// resume handle, and it resumes. Killing a finished task or an unknown id is
// a clear error, and so is resuming a running one.
func TestTasksKill(t *testing.T) {
	p := newDispatchProject(t, true)
	parent := p.start(nil, "subagent", "--background", "sleeper", "think")
	id := p.runningTask()
	// Wait until the child is in its first (hour-long) model call: past its
	// start-up, it winds down on SIGTERM and records that it was stopped.
	p.waitTranscript(id, "the child's first turn", func(r session.Record) bool { return r.Type == session.RecMessage })
	var lg dispatch.Log
	readRecord(t, p.root, id, dispatch.LogFile, &lg)
	if lg.PID <= 0 || !dispatch.Alive(lg.PID, id) {
		t.Fatalf("dispatch log of the running task: %+v", lg)
	}

	code, out, errOut := p.brood("tasks", "resume", id, "wake up")
	if code != 1 || out != "" || errOut != "brood: task "+id+" (sleeper) is still running: wait for it with TaskOutput or steer it with SendMessage (from a shell: brood tasks output "+id+" --wait, brood tasks send "+id+" \"...\")\n" {
		t.Errorf("resume of a running task: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = p.brood("tasks", "show", id)
	if code != 0 || !strings.Contains(out, "status   running\n") || !strings.Contains(out, "── result: none") || !strings.Contains(out, "── output: none") {
		t.Errorf("show of a running task: code %d\n%s", code, out)
	}

	code, out, errOut = p.brood("tasks", "kill", id)
	want := "stopped task " + id + " (pid " + jsonNumber(lg.PID) + "); resume it with: brood tasks resume " + id + " \"...\"\n"
	if code != 0 || out != want {
		t.Fatalf("kill: code %d, stdout %q (want %q), stderr %q", code, out, want, errOut)
	}
	if dispatch.Alive(lg.PID, id) {
		t.Errorf("the child (pid %d) is still alive after kill returned", lg.PID)
	}
	list := p.listJSON()
	if len(list) != 1 {
		t.Fatalf("tasks: %v", list)
	}
	res, _ := list[0]["result"].(map[string]any)
	if st := list[0]["status"]; (st != "cancelled" && st != "killed") || res["resume_handle"] != id {
		t.Errorf("after kill: status %v, result %v", st, res)
	}
	code, out, _ = p.brood("tasks", "--status", list[0]["status"].(string))
	if code != 0 || !regexp.MustCompile(`(?m)^`+id+`\s+sleeper\s+(cancelled|killed)\s`).MatchString(out) {
		t.Errorf("table after kill:\n%s", out)
	}
	if code := parent.wait(t); code != 130 && code != 1 {
		t.Errorf("the parent exited %d after its child was killed; stderr:\n%s", code, parent.stderr.String())
	}
	code, out, _ = p.brood("tasks", "output", id)
	if code != 0 || !strings.Contains(out, `status="`+list[0]["status"].(string)+`"`) || !strings.Contains(out, `resume_task_id="`+id+`"`) {
		t.Errorf("output after kill: code %d\n%s", code, out)
	}

	code, out, errOut = p.brood("tasks", "kill", id)
	if code != 1 || out != "" || errOut != "brood: task "+id+" is not running (status "+list[0]["status"].(string)+")\n" {
		t.Errorf("killing a stopped task: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = p.brood("tasks", "kill", "--json", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	if code != 1 || !strings.HasPrefix(errOut, "brood: no task 01ARZ3NDEKTSV4RRFFQ69G5FAV under ") {
		t.Errorf("killing an unknown task: code %d, stderr %q", code, errOut)
	}

	// It stays resumable: the same task continues.
	code, out, errOut = p.broodWithin(time.Minute, "tasks", "resume", id, "wake up")
	if code != 0 || !strings.Contains(out, `status="done"`) || !strings.Contains(out, "Awake again after the stop.") {
		t.Errorf("resume after kill: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestTasksKillJSON: kill --json, on a task whose parent is a separate process.
func TestTasksKillJSON(t *testing.T) {
	p := newDispatchProject(t, true)
	parent := p.start(nil, "subagent", "--background", "sleeper", "think")
	id := p.runningTask()
	p.waitTranscript(id, "the child's first turn", func(r session.Record) bool { return r.Type == session.RecMessage })
	code, out, errOut := p.brood("tasks", "kill", "--json", id)
	var v map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["task_id"] != id || v["killed"] != true || v["pid"].(float64) <= 0 {
		t.Fatalf("kill --json: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	parent.wait(t)
	var res dispatch.Result
	readRecord(t, p.root, id, dispatch.ResultFile, &res)
	if (res.Status != "cancelled" && res.Status != "killed") || res.ResumeHandle != id {
		t.Errorf("result after kill: %+v", res)
	}
}

// TestTasksSend steers a running child: the message is recorded in its
// transcript and changes what it says next. A finished or unknown task
// refuses the message.
func TestTasksSend(t *testing.T) {
	p := newDispatchProject(t, true)
	parent := p.start(nil, "subagent", "--background", "worker", "work")
	t.Cleanup(func() { _ = os.WriteFile(filepath.Join(p.root, "go-ahead"), nil, 0o644) })
	id := p.runningTask()
	transcript := filepath.Join(dispatch.Dir(p.root, id), dispatch.SessionFile)
	// Wait until the child is inside its first tool call: the message then
	// arrives at the next turn boundary.
	p.waitTranscript(id, "the child's first tool call", func(r session.Record) bool { return r.Type == session.RecToolCall && r.Tool == "Bash" })
	code, out, errOut := p.brood("tasks", "send", id, "CHANGE PLAN:", "stop and report")
	if code != 0 || out != "message queued for task "+id+"; it arrives at its next turn\n" {
		t.Fatalf("send: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = p.brood("tasks", "send", "--json", id, "and be brief")
	var v map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["task_id"] != id || v["queued"] != true {
		t.Fatalf("send --json: code %d, stdout %q", code, out)
	}
	if err := os.WriteFile(filepath.Join(p.root, "go-ahead"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := parent.wait(t); code != 0 {
		t.Fatalf("the parent exited %d; stderr:\n%s", code, parent.stderr.String())
	}

	code, out, _ = p.brood("tasks", "output", id)
	if code != 0 || !strings.HasPrefix(out, "status: done\n") || !strings.Contains(out, "\nChanged course as the parent asked.\n") {
		t.Errorf("the message did not change what the child said: code %d\n%s", code, out)
	}
	recs, _, err := session.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	var steers []string
	for _, r := range recs {
		if r.Type == session.RecSteer {
			steers = append(steers, r.Text)
		}
	}
	if len(steers) != 2 || !strings.HasSuffix(steers[0], "\nCHANGE PLAN: stop and report") || !strings.HasSuffix(steers[1], "\nand be brief") {
		t.Errorf("steering records in the transcript: %q", steers)
	}
	code, out, _ = p.brood("tasks", "log", id)
	if code != 0 || !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d ✉ \[message from the user \(brood tasks send\), delivered while you work\]\n\s+CHANGE PLAN: stop and report$`).MatchString(out) {
		t.Errorf("the log does not show the message:\n%s", out)
	}
	if ents, _ := os.ReadDir(filepath.Join(dispatch.Dir(p.root, id), dispatch.InboxDir)); len(ents) != 0 {
		t.Errorf("the inbox still holds %d message(s)", len(ents))
	}

	code, out, errOut = p.brood("tasks", "send", id, "too late")
	if code != 1 || out != "" || errOut != "brood: task "+id+" (worker) is not running (status done); resume it with this message instead (brood tasks resume "+id+" \"...\")\n" {
		t.Errorf("send to a finished task: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = p.brood("tasks", "send", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "hello")
	if code != 1 || !strings.HasPrefix(errOut, "brood: no task 01ARZ3NDEKTSV4RRFFQ69G5FAV under ") {
		t.Errorf("send to an unknown task: code %d, stderr %q", code, errOut)
	}
}

// TestTasksOutputWait: for a running task (a slow child of another process)
// output says so at once, and with --wait it waits until the task is done.
func TestTasksOutputWait(t *testing.T) {
	p := newDispatchProject(t, true)
	parent := p.start(nil, "subagent", "--background", "slow", "take your time")
	id := p.runningTask()
	// The parent names the task before it finishes.
	waitFor(t, "the parent to name the task", func() bool { return strings.Contains(parent.stdout.String(), "task "+id+" ") })

	// The child's only turn takes 3s: these run well inside it.
	code, out, errOut := p.brood("tasks", "output", id)
	if want := "status: running\nTask " + id + " (slow) is still running."; code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("output of a running task: code %d, stdout %q (want %q...), stderr %q", code, out, want, errOut)
	}
	code, out, _ = p.brood("tasks", "output", "--json", "--wait", "--timeout", "50ms", id)
	var v map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["status"] != "running" || v["task_id"] != id {
		t.Errorf("--wait --timeout 50ms: code %d, stdout %q", code, out)
	}

	code, out, errOut = p.brood("tasks", "output", "--wait", id)
	if code != 0 || !strings.HasPrefix(out, "status: done\n<subagent-result task-id=\""+id+"\" agent=\"slow\" status=\"done\" trust=\"untrusted\"") || !strings.Contains(out, "\nslow and steady: finished\n</subagent-result>\n") {
		t.Errorf("--wait: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if code := parent.wait(t); code != 0 {
		t.Errorf("the parent exited %d; stderr:\n%s", code, parent.stderr.String())
	}
	if !strings.Contains(parent.stderr.String(), "task "+id+" finished") {
		t.Errorf("the background parent's stderr:\n%s", parent.stderr.String())
	}
}
