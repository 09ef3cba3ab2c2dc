package run_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestCtrlCSaysWhatStoppedTheTask: a Ctrl-C of the root while its writer
// runs is said as that, from the root's own record of the signal, never as
// Go's "context canceled": in the progress line, in `brood tasks show`, in
// `brood tasks` and in the Task result the continued root reads (newuser
// P3-1).
func TestCtrlCSaysWhatStoppedTheTask(t *testing.T) {
	p := clitest.NewDispatchProject(t, false)
	clitest.WriteFile(t, filepath.Join(p.Root, ".brood", "agents", "writer.md"), "---\nname: writer\ndescription: writes\ntools: Write, Bash\n---\nYou write.\n")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "--permission-mode", "bypassPermissions", "--model", p.Script("kw.yaml", killedWriterScript), "edit")
	cmd.Dir = p.Root
	cmd.Env = append(os.Environ(), clitest.TestMainEnv+"=1", "HOME="+p.Home)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
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
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-done
	const said = "stopped: the run was interrupted (Ctrl-C)"
	if errs := stderr.String(); strings.Contains(errs, "context canceled") || !strings.Contains(errs, "] "+said) {
		t.Errorf("the root's progress after Ctrl-C; want %q, never Go's words:\n%s", said, errs)
	}
	id := clitest.OnlyTask(t, p.Root)
	_, show, _ := p.Brood("tasks", "show", id)
	for _, want := range []string{"\nnote     " + said + "\n", "\nstopped  the run was interrupted (Ctrl-C): resume it with brood tasks resume " + id, "\nresult (cancelled):"} {
		if !strings.Contains(show, want) || strings.Contains(show, "context canceled") {
			t.Errorf("tasks show lacks %q (or says context canceled):\n%s", want, show)
		}
	}
	if _, list, _ := p.Brood("tasks"); !strings.Contains(list, "("+said+")") {
		t.Errorf("brood tasks does not say what stopped it:\n%s", list)
	}
	code, out, errOut := p.Brood("run", "-c", "--permission-mode", "bypassPermissions", "--model", p.Script("cont.yaml", continueScript), "continue")
	if code != 0 || strings.Contains(out, "context canceled") || !strings.Contains(out, said) {
		t.Errorf("the continued root's Task result; want %q: code %d\n%s\n%s", said, code, out, errOut)
	}
}
