package cli_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

// TestDemo runs `brood demo` end to end: the root agent uses the real
// tools, then three subagents run as real child processes (this binary,
// re-executed as brood).
func TestDemo(t *testing.T) {
	p := newProject(t)
	t.Setenv(testMainEnv, "1") // children are re-executions of this binary
	t.Setenv("HOME", p.home)   // and must not read the real user's agents
	code, out, errOut := p.brood("demo")
	if code != 0 {
		t.Fatalf("code %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, w := range []string{"Three subagents ran in parallel", "Documentation survey:", "README.md", "Entry points:", "main.go", "Onboarding plan:"} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "untrusted") == false {
		t.Errorf("the children's results are not marked untrusted:\n%s", out)
	}
	for _, w := range []string{"▸ Task", "[explore ", "[plan ", "done after 3 turns", "subagents in"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	st := replayValid(t, sessionFiles(t, p.root)[0])
	if st.Status != "done" || st.Turns != 3 {
		t.Errorf("demo transcript: status %q, %d turns", st.Status, st.Turns)
	}
}

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
	p := newProject(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "--mode", "json", "--permission-mode", "bypassPermissions",
		"--model", p.script("block.yaml", blockingScript), "look around")
	cmd.Dir = p.root
	cmd.Env = append(os.Environ(), testMainEnv+"=1", "HOME="+p.home)
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

	code, out, errOut := p.brood("run", "--session", path, "--model", p.script("resume.yaml", resumeScript), "go on")
	if code != 0 {
		t.Fatalf("continue: code %d, stderr:\n%s", code, errOut)
	}
	if !strings.HasPrefix(out, "Resumed. LS gave ") || !strings.Contains(out, "Bash: interrupted…") {
		t.Errorf("answer %q: the recorded LS result or the interrupted Bash result did not reach the model", out)
	}
	if files := sessionFiles(t, p.root); len(files) != 1 {
		t.Errorf("continuing created another session: %v", files)
	}

	// The whole file, old and new, replays to a valid conversation.
	st := replayValid(t, path)
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
