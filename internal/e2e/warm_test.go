package e2e_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/testbrood"
)

// warmProcs are the idle (or working) warm children of the project's brood
// processes, by task id: the processes started with --warm for a task
// directory of this project.
func warmProcs(root string) map[string]int {
	out := map[string]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if !slices.Contains(args, "--warm") {
			continue
		}
		i := slices.Index(args, "--envelope")
		j := slices.Index(args, "--task-id")
		if i < 0 || j < 0 || i+1 >= len(args) || j+1 >= len(args) || !strings.HasPrefix(args[i+1], dispatch.Root(root)+"/") {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
			continue
		}
		out[args[j+1]] = pid
	}
	return out
}

// waitWarm polls /proc until cond holds for the project's warm children.
func waitWarm(t *testing.T, r *bg, what string, cond func(map[string]int) bool) map[string]int {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		w := warmProcs(r.root)
		if cond(w) {
			return w
		}
		select {
		case <-r.done:
			t.Fatalf("brood ended before %s\nstdout:\n%s\nstderr:\n%s", what, r.out.String(), r.errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s; warm children %v", what, w)
		}
		time.Sleep(20 * time.Millisecond) // polling /proc, not synchronising on time
	}
}

// checkIdleWarm looks at an idle warm child from outside, before its task's
// envelope exists: its own session and process group, its own cgroup (or
// PID namespace), and no_new_privs, which the parent sets on the thread it
// applies the Landlock policy from.
func checkIdleWarm(t *testing.T, root, id string, pid int) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dispatch.Dir(root, id), dispatch.EnvelopeFile)); !os.IsNotExist(err) {
		t.Fatalf("an idle warm child's task %s has an envelope already (%v)", id, err)
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(st)[strings.LastIndexByte(string(st), ')')+2:])
	if f[2] != strconv.Itoa(pid) || f[3] != strconv.Itoa(pid) {
		t.Errorf("warm child %d: process group %s, session %s; want its own", pid, f[2], f[3])
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if !strings.Contains(string(status), "NoNewPrivs:\t1") {
		t.Errorf("warm child %d is not under no_new_privs:\n%s", pid, status)
	}
	cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if mode, _, _ := pool.ProbeContainment(t.Context(), ""); mode == pool.ContainCgroup && !strings.Contains(string(cg), "/brood-"+id+"-d1-m1") {
		t.Errorf("warm child %d is not in its task's cgroup: %q", pid, cg)
	}
}

const warmExplore = `  explore:
    - tools: [{Bash: {command: "echo x > ESCAPED; echo rc=$?"}}]
    - say: "## What I did\nTried to write.\n\n## What I found\n{{trunc 300 (result 0)}}\n\n## Files changed\nnone\n\n## Problems\nnone"
`

// TestWarmChildrenServeTasks runs two explores with pool.warm = 2: both
// take warm children that were started before their tasks existed, each
// contained and sandboxed before its envelope was written; a warm child
// killed while idle is replaced and never handed a task; a warm-started
// task's records have the shape of a cold one's.
func TestWarmChildrenServeTasks(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "go")
	outside := "ESCAPED"
	script := `
agents:
  root:
    - tools: [{Bash: {command: "` + waitFor(gate) + `"}}]
    - tools:
        - Task: {subagent_type: explore, description: "look a", prompt: "look"}
        - Task: {subagent_type: explore, description: "look b", prompt: "look"}
    - say: "{{result 0}}{{result 1}}"
` + warmExplore
	p := newProject(t, nil)
	p.Env = append(p.Env, "BROOD_WARM=2")
	r := start(t, p, "run", "--model", p.Script("s.yaml", script), "--allow", "Bash", "fan out")
	idle := waitWarm(t, r, "two idle warm children", func(w map[string]int) bool { return len(w) == 2 })
	for id, pid := range idle {
		checkIdleWarm(t, p.Root, id, pid)
	}
	// One dies while idle: it is replaced, and its task id is never used.
	killedID := slices.Sorted(maps.Keys(idle))[0]
	killed := idle[killedID]
	if err := syscall.Kill(killed, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ready := waitWarm(t, r, "the killed warm child replaced", func(w map[string]int) bool {
		_, still := w[killedID]
		return len(w) == 2 && !still
	})
	testbrood.WriteFile(t, gate, "")
	stdout, stderr := r.wait()
	if strings.Count(stdout, `status="done"`) != 2 {
		t.Fatalf("two explores did not finish\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	// Refused by Landlock (EACCES) or, first, by its read-only mounts
	// (EROFS: a read-only child's own mount view).
	if strings.Count(stdout, "Permission denied")+strings.Count(stdout, "Read-only file system") != 2 {
		t.Errorf("a warm child's Bash could write outside its policy:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(p.Root, outside)); !os.IsNotExist(err) {
		t.Errorf("a warm child wrote %s: %v", outside, err)
	}
	tasks, _ := dispatch.ListTasks(p.Root)
	if len(tasks) != 2 {
		t.Fatalf("want the two explores on disk (the idle warm children's directories are gone), have %d", len(tasks))
	}
	if _, err := os.Stat(dispatch.Dir(p.Root, killedID)); !os.IsNotExist(err) {
		t.Errorf("the killed warm child's directory is still there: %v", err)
	}
	for _, tk := range tasks {
		pid, ok := ready[tk.ID]
		if !ok || tk.Log == nil || tk.Log.PID != pid || pid == killed {
			t.Errorf("task %s ran in pid %v; warm children before the dispatch %v (killed %d)", tk.ID, tk.Log, ready, killed)
		}
	}

	// The same dispatch, cold: every record has the same fields.
	cold := newProject(t, nil)
	testbrood.WriteFile(t, gate, "")
	rc := start(t, cold, "run", "--model", cold.Script("s.yaml", script), "--allow", "Bash", "fan out")
	if out, errOut := rc.wait(); strings.Count(out, `status="done"`) != 2 {
		t.Fatalf("cold run:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	coldTasks, _ := dispatch.ListTasks(cold.Root)
	if len(coldTasks) != 2 {
		t.Fatalf("cold tasks: %d", len(coldTasks))
	}
	for _, file := range []string{dispatch.EnvelopeFile, dispatch.ResultFile, dispatch.OutputFile, dispatch.LogFile} {
		w, c := jsonKeysOf(t, filepath.Join(tasks[0].Dir, file)), jsonKeysOf(t, filepath.Join(coldTasks[0].Dir, file))
		if !slices.Equal(w, c) {
			t.Errorf("%s of a warm-started task has fields %v, a cold one's %v", file, w, c)
		}
	}
	if w, c := dirNames(t, tasks[0].Dir), dirNames(t, coldTasks[0].Dir); !slices.Equal(w, c) {
		t.Errorf("a warm-started task's directory holds %v, a cold one's %v", w, c)
	}
}

func jsonKeysOf(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return slices.Sorted(maps.Keys(m))
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestTasksKillWarmStarted: `brood tasks kill` stops a task whose child was
// started warm, from another process, by the same kernel proofs as a cold
// one's (its argv[0] marker, its cgroup).
func TestTasksKillWarmStarted(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "go")
	script := `
agents:
  root:
    - tools: [{Bash: {command: "` + waitFor(gate) + `"}}]
    - tools:
        - Task: {subagent_type: explore, description: "think", prompt: "think"}
    - say: "{{result 0}}"
  explore:
    - cases:
        - if: "wake up"
          say: "Awake again after the stop."
      say: "thinking for an hour"
      delay: 1h
`
	p := newProject(t, nil)
	p.Env = append(p.Env, "BROOD_WARM=1")
	r := start(t, p, "run", "--model", p.Script("s.yaml", script), "--allow", "Bash", "fan out")
	warm := waitWarm(t, r, "an idle warm child", func(w map[string]int) bool { return len(w) == 1 })
	testbrood.WriteFile(t, gate, "")
	var id string
	var lg *dispatch.Log
	r.until(t, "the explore running", func(ts []*dispatch.Task) bool {
		if len(ts) == 1 && ts[0].Status == dispatch.StatusRunning && ts[0].Log != nil && ts[0].Log.PID > 0 {
			id, lg = ts[0].ID, ts[0].Log
			return true
		}
		return false
	})
	if warm[id] != lg.PID {
		t.Fatalf("task %s runs in pid %d; the warm child before the dispatch was %v", id, lg.PID, warm)
	}
	code, out, errOut := p.Brood(t.Context(), nil, "tasks", "kill", id)
	if code != 0 || !strings.HasPrefix(out, "stopped task "+id+" (pid "+strconv.Itoa(lg.PID)+")") {
		t.Fatalf("kill: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if dispatch.Alive(lg.PID, id) {
		t.Errorf("the warm-started child %d is alive after kill returned", lg.PID)
	}
	r.wait()
	tk, err := dispatch.LoadTask(p.Root, id)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != dispatch.StatusKilled && tk.Status != dispatch.StatusCancelled {
		t.Errorf("after kill: status %s", tk.Status)
	}
	// It resumes as any task does (a resume always starts cold).
	code, out, errOut = p.Brood(t.Context(), []string{"BROOD_MODEL=" + p.Script("s.yaml", script)}, "tasks", "resume", id, "wake up")
	if code != 0 || !strings.Contains(out, `status="done"`) || !strings.Contains(out, "Awake again after the stop.") {
		t.Errorf("resume of the warm-started task: code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
