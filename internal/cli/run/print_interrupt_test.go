package run_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestPrintCtrlCPrintsNoAnswer: `brood -p` interrupted (SIGINT) while a
// tool runs exits 130 with nothing on stdout: the first turn's text
// ("Listing, and waiting on the shell.") is a step, shown on stderr, not
// the answer a script reading stdout would take.
func TestPrintCtrlCPrintsNoAnswer(t *testing.T) {
	p := clitest.NewProject(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-p", "--permission-mode", "bypassPermissions", "--model", p.Script("block.yaml", blockingScript), "look around")
	cmd.Dir = p.Root
	cmd.Env = append(os.Environ(), clitest.TestMainEnv+"=1", "HOME="+p.Home)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var seen strings.Builder
	br := bufio.NewReader(stderr)
	for {
		line, err := br.ReadString('\n')
		seen.WriteString(line)
		if strings.Contains(line, "▸ Bash") {
			break
		}
		if err != nil {
			t.Fatalf("the run never started its Bash call; stderr:\n%s", seen.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br)
	seen.Write(rest)
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130; stderr:\n%s", code, seen.String())
	}
	if stdout.String() != "" {
		t.Errorf("stdout %q after Ctrl-C, want nothing (the interim text is not the answer)", stdout.String())
	}
	if !strings.Contains(seen.String(), "· Listing, and waiting on the shell.") || !strings.Contains(seen.String(), "cancelled") {
		t.Errorf("stderr does not show the step and the interruption:\n%s", seen.String())
	}
}
