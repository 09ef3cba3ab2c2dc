package run_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

// blockingScript's first turn lists the directory and runs a shell command
// that lasts as long as brood does; its second turn is never reached.
const blockingScript = `
agents:
  root:
    - say: "Listing, and waiting on the shell."
      tools:
        - LS: {path: "."}
        - Bash: {command: "while kill -0 $PPID 2>/dev/null; do sleep 0.05; done", description: "wait for brood to go"}
    - say: "not reached"
`

const resumeScript = `
agents:
  root:
    - say: "(turn 1 is in the transcript)"
    - say: "Resumed. LS gave {{count (result 0)}} entries; Bash: {{trunc 11 (result 1)}}"
`

// TestKillMidTurnThenContinue kills brood with SIGKILL while a tool call
// runs, then continues the transcript it left with --session.
func TestKillMidTurnThenContinue(t *testing.T) {
	p := clitest.NewProject(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "--mode", "json", "--permission-mode", "bypassPermissions",
		"--model", p.Script("block.yaml", blockingScript), "look around")
	cmd.Dir = p.Root
	cmd.Env = append(os.Environ(), clitest.TestMainEnv+"=1", "HOME="+p.Home)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	// Events are printed after their records are written, so once the LS
	// result is on stdout the transcript holds both calls and that result,
	// and the Bash call is still running.
	var path string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var ev struct{ Type, Tool, Session string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("child stdout: %q", sc.Text())
		}
		if ev.Type == "start" {
			path = ev.Session
		}
		if ev.Type == "tool_result" && ev.Tool == "LS" {
			break
		}
	}
	if path == "" {
		t.Fatalf("the child never reported the LS result; stderr:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child exited with %v, not by SIGKILL", cmd.ProcessState)
	}

	recs, _, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before := len(recs)
	for _, r := range recs {
		if r.Type == session.RecEnd || (r.Type == session.RecToolResult && r.Tool == "Bash") {
			t.Fatalf("the killed run recorded %s for %s: it was not killed mid-turn", r.Type, r.Tool)
		}
	}

	code, out, errOut := p.Brood("run", "--session", path, "--model", p.Script("resume.yaml", resumeScript), "go on")
	if code != 0 {
		t.Fatalf("continue: code %d, stderr:\n%s", code, errOut)
	}
	if !strings.HasPrefix(out, "Resumed. LS gave ") || !strings.Contains(out, "Bash: interrupted…") {
		t.Errorf("answer %q: the recorded LS result or the interrupted Bash result did not reach the model", out)
	}
	if files := clitest.SessionFiles(t, p.Root); len(files) != 1 {
		t.Errorf("continuing created another session: %v", files)
	}

	// The whole file, old and new, replays to a valid conversation.
	st := clitest.ReplayValid(t, path)
	if st.Skipped != 0 {
		t.Errorf("%d torn lines", st.Skipped)
	}
	after, _, _ := session.ReadFile(path)
	if len(after) <= before {
		t.Fatal("nothing was appended to the transcript")
	}
	if st.Status != "done" || st.Turns != 2 || len(st.Messages) != 4 {
		t.Fatalf("replay: status %q, %d turns, %d messages", st.Status, st.Turns, len(st.Messages))
	}
	calls := st.Messages[1].ToolUses()
	var results []model.Part
	for _, p := range st.Messages[2].Content {
		if p.Type == model.PartToolResult {
			results = append(results, p)
		}
	}
	if len(calls) != 2 || len(results) != 2 {
		t.Fatalf("calls %+v results %+v", calls, results)
	}
	if results[0].IsError || !strings.Contains(results[0].Text, "README.md") {
		t.Errorf("LS result %+v, want the recorded listing", results[0])
	}
	if !results[1].IsError || results[1].Text != session.Interrupted {
		t.Errorf("Bash result %+v, want interrupted", results[1])
	}
	if st.Messages[2].Text() != "go on" || !strings.HasPrefix(st.Messages[3].Text(), "Resumed.") {
		t.Errorf("the new turn: %q then %q", st.Messages[2].Text(), st.Messages[3].Text())
	}
}
