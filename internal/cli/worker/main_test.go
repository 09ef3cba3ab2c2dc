package worker_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/testbrood"
)

const mainEnv = "BROOD_WORKER_CMD_TEST_MAIN"

// TestMain lets the test binary be brood: workers and the submitter run as
// real processes, and their agents as real children of the workers; the
// submitters' checkout records stay in a state home of its own.
func TestMain(m *testing.M) { testbrood.MainOwnState(m, mainEnv) }

// proc is a brood process running in the background.
type proc struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	out bytes.Buffer
	end chan struct{}
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// kill sends SIGKILL to the process alone and waits for it.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.end
}

// startBrood starts brood in a project, its stderr watched for a line
// starting with ready (waited for when not empty).
func startBrood(t *testing.T, pr *testbrood.Project, env []string, ready string, args ...string) *proc {
	t.Helper()
	if len(args) > 0 && args[0] == "worker" {
		testbrood.FleetWorkerKey(t, pr.Home) // the fleet's workers trust each other
	}
	exe, _ := os.Executable()
	cmd := exec.Command(exe, workerArgs(args)...)
	cmd.Dir = pr.Root
	cmd.Env = append(append([]string(nil), pr.Env...), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, end: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	up := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		var once sync.Once
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if ready != "" && strings.HasPrefix(sc.Text(), ready) {
				once.Do(func() { close(up) })
			}
		}
		_ = cmd.Wait()
		close(p.end)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("brood %v:\n%s", args, p.log())
		}
	})
	if ready == "" {
		return p
	}
	select {
	case <-up:
	case <-p.end:
		t.Fatalf("brood %v exited while starting:\n%s", args, p.log())
	case <-time.After(90 * time.Second):
		t.Fatalf("brood %v did not start within 90s:\n%s", args, p.log())
	}
	return p
}

// workerProject is a repository for one worker, its model a script.
func workerProject(t *testing.T, script string) *testbrood.Project {
	t.Helper()
	pr := testbrood.NewProject(t, mainEnv, nil)
	spec := pr.Script("script.yaml", script)
	// The worker's model in its environment, as an operator gives it: a
	// script: model in a project's settings waits for trust.
	pr.Env = append(pr.Env, "BROOD_MODEL="+spec)
	testbrood.WriteFile(t, filepath.Join(pr.Root, ".brood", "settings.toml"),
		"[pool]\nping_interval = \"100ms\"\nheartbeat_timeout = \"3s\"\nkill_grace = \"2s\"\n")
	return pr
}

// appendSettings adds text to the project at root's .brood/settings.toml
// (workerProject's).
func appendSettings(t *testing.T, root, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(root, ".brood", "settings.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// tasks lists the task ids a project ran.
func tasks(pr *testbrood.Project) []string {
	ents, _ := os.ReadDir(filepath.Join(pr.Root, ".brood", "dispatch"))
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// workerArgs gives a `brood worker` that names no trusted key
// --allow-unsigned: the tests that are not about signed submissions submit
// unsigned ones (signed_test.go is about them).
func workerArgs(args []string) []string {
	if len(args) == 0 || args[0] != "worker" {
		return args
	}
	for _, a := range args {
		if a == "--trusted-key" || a == "--allow-unsigned" || strings.HasPrefix(a, "--trusted-key=") {
			return args
		}
	}
	return append(append([]string(nil), args...), "--allow-unsigned")
}
