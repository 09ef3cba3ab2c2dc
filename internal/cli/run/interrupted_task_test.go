package run_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/cli/clitest"
)

const killedWriterScript = `
agents:
  root:
    - say: "Delegating the edit."
      tools:
        - Task: {subagent_type: writer, description: "edit notes", prompt: "write notes.txt"}
    - say: "not reached"
  writer:
    - say: "Writing, then waiting."
      tools:
        - Write: {file_path: "notes.txt", content: "edited\n"}
        - Bash: {command: "while kill -0 $PPID 2>/dev/null; do sleep 0.05; done", description: "wait for the parent to go"}
    - say: "not reached"
`

const continueScript = `
agents:
  root:
    - say: "(turn 1 is in the transcript)"
    - say: "Continued. Task: {{result 0}}"
`

// TestKilledRootTaskResultNamesTheTask: after a SIGKILL of the root while
// its writer runs, brood run -c gives the model, for the cut-off Task call,
// the task's id, status, files and resume handle, not "run it again"
// (newuser P2-3).
func TestKilledRootTaskResultNamesTheTask(t *testing.T) {
	p := clitest.NewDispatchProject(t, false)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "writer.md"), "---\nname: writer\ndescription: writes\ntools: Write, Bash\n---\nYou write.\n")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "--permission-mode", "bypassPermissions", "--model", p.Script("kw.yaml", killedWriterScript), "edit")
	cmd.Dir = p.Root
	cmd.Env = append(os.Environ(), clitest.TestMainEnv+"=1", "HOME="+p.Home)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	// The writer's edit on disk is the condition to kill on.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(p.Root, "notes.txt")); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			t.Fatalf("the writer never wrote notes.txt (%v); stderr:\n%s", err, stderr.String())
		}
		select {
		case <-done:
			t.Fatalf("the root ended before the writer wrote; stderr:\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	id := clitest.OnlyTask(t, p.Root)

	// The continuing script is written outside .brood/: the killed root's
	// in-place writer's guard is put back by the next brood, which moves
	// aside anything new in the project's configuration (crashrestore).
	cont := filepath.Join(t.TempDir(), "cont.yaml")
	clitest.WriteFile(t, cont, continueScript)
	code, out, errOut := p.Brood("run", "-c", "--permission-mode", "bypassPermissions", "--model", "script:"+cont, "continue")
	if code != 0 {
		t.Fatalf("continue: code %d, stderr:\n%s", code, errOut)
	}
	for _, want := range []string{"task " + id, `resume_task_id "` + id + `"`, "now ", "notes.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("the continued root's Task result lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Run it again") {
		t.Errorf("the model is told to run the writer again:\n%s", out)
	}

	// Once the orphaned writer has ended (it sees its parent gone), brood
	// tasks show names the file it edited, as after a Ctrl-C.
	for {
		_, show, _ := p.Brood("tasks", "show", id)
		if !strings.Contains(show, "\nstatus   running\n") {
			if !strings.Contains(show, "\nfiles    notes.txt") {
				t.Errorf("tasks show of the writer ended by its parent's kill -9 lacks its files:\n%s", show)
			}
			// What stopped it, in words (newuser P3-1), not Go's.
			// The next brood stops an orphaned in-place writer to put back
			// its guard (crashrestore), and says so; or it ended by itself.
			if strings.Contains(show, "context canceled") || !strings.Contains(show, "\nstopped  its parent run ended before it finished") && !strings.Contains(show, "stopped by brood: its parent run ended") {
				t.Errorf("tasks show of the writer does not say its parent ended:\n%s", show)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer still runs after its parent's kill -9:\n%s", show)
		}
		time.Sleep(50 * time.Millisecond) // polling the writer's end, with a deadline
	}
}
