package tasks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
)

// finishWithin waits for a detached brood to end within d, killing it and
// failing the test if it does not.
func finishWithin(t *testing.T, d *clitest.Detached, within time.Duration) int {
	t.Helper()
	select {
	case <-d.Done:
		return d.Cmd.ProcessState.ExitCode()
	case <-time.After(within):
		_ = d.Cmd.Process.Kill()
		<-d.Done
		t.Fatalf("brood %v hung (killed after %v); stdout:\n%s\nstderr:\n%s", d.Cmd.Args[1:], within, d.Stdout.String(), d.Stderr.String())
		return -1
	}
}

// TestChildFIFOInTaskDirHangsNothing (red team P1-8): a real child makes
// a FIFO in its task directory where the parent opens a file (the legacy
// .lock, its transcript): its root still ends after its
// answer, and `brood tasks`, `tasks show` and `tasks log` still answer.
func TestChildFIFOInTaskDirHangsNothing(t *testing.T) {
	for _, name := range []string{".lock", "session.jsonl"} {
		t.Run(name, func(t *testing.T) {
			p := clitest.NewDispatchProject(t, false)
			spec := p.Script("fifo.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: worker, description: "make a fifo", prompt: "go"}
    - say: "root after"
  worker:
    - tools:
        - Bash: {command: "f=\"$(dirname \"$TMPDIR\")/`+name+`\"; rm -f \"$f\" && mkfifo \"$f\" && echo made", description: "plant"}
    - say: "planted: {{result 0}}"
`)
			run := p.Start(nil, "run", "--model", spec, "go")
			if code := finishWithin(t, run, 60*time.Second); code != 0 && !strings.Contains(run.Stdout.String(), "root after") {
				t.Fatalf("run: code %d\n%s\n%s", code, run.Stdout.String(), run.Stderr.String())
			}
			id := clitest.OnlyTask(t, p.Root)
			if st, err := os.Lstat(filepath.Join(dispatch.Dir(p.Root, id), name)); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
				t.Fatalf("the child made no FIFO %s: %v", name, err)
			}
			list := p.Start(nil, "tasks", "--json")
			if code := finishWithin(t, list, 30*time.Second); code != 0 {
				t.Fatalf("tasks: code %d\n%s", code, list.Stderr.String())
			}
			var items []struct{ ID string }
			if err := json.Unmarshal([]byte(list.Stdout.String()), &items); err != nil || len(items) != 1 || items[0].ID != id {
				t.Fatalf("tasks --json lists %q (%v), want %s", list.Stdout.String(), err, id)
			}
			for _, args := range [][]string{{"tasks", "show", id}, {"tasks", "log", id}} {
				finishWithin(t, p.Start(nil, args...), 30*time.Second)
			}
		})
	}
}
