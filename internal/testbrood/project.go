package testbrood

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Project is a temporary git repository with its own HOME, in which the
// test binary runs as brood in real processes (see Main).
type Project struct {
	T    *testing.T
	Root string
	Home string
	// Env is the environment every brood and git process gets: mainEnv=1,
	// HOME, BROOD_CHILD_EXE, PATH and a git identity.
	Env []string
}

// NewProject makes a repository holding files (a README and a main.go when
// files is nil), commits them, and returns it. mainEnv is the variable
// whose value "1" makes the test binary act as brood (the one passed to Main).
func NewProject(t *testing.T, mainEnv string, files map[string]string) *Project {
	t.Helper()
	root, home := t.TempDir(), t.TempDir()
	if files == nil {
		files = map[string]string{"README.md": "# Sample\n", "main.go": "package main\n\nfunc main() {}\n"}
	}
	for name, body := range files {
		WriteFile(t, filepath.Join(root, name), body)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// What the test reads in-process (dispatch.ListTasks) takes the same
	// home as brood as a process: the user's record key is there.
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	p := &Project{T: t, Root: root, Home: home, Env: []string{
		mainEnv + "=1", "HOME=" + home, "BROOD_CHILD_EXE=" + exe, "PATH=" + os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost",
	}}
	TrustFleetWorkers(t, home) // a fleet call's submitter takes the test workers' results
	p.Git("init", "-q")
	p.Git("add", "-A")
	p.Git("commit", "-qm", "init")
	return p
}

// Git runs git in the project and returns its output; a failure fails the test.
func (p *Project) Git(args ...string) string {
	p.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = p.Root
	cmd.Env = p.Env
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.T.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Script writes a scripted-model file under .brood and returns its --model value.
func (p *Project) Script(name, yaml string) string {
	p.T.Helper()
	path := filepath.Join(p.Root, ".brood", name)
	WriteFile(p.T, path, yaml)
	return "script:" + path
}

// Brood runs brood as a real process in the project and returns its exit
// code, stdout and stderr. extraEnv entries are KEY=VALUE.
func (p *Project) Brood(ctx context.Context, extraEnv []string, args ...string) (code int, stdout, stderr string) {
	p.T.Helper()
	exe, err := os.Executable()
	if err != nil {
		p.T.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = p.Root
	cmd.Env = append(append([]string{}, p.Env...), extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		p.T.Fatalf("brood %v: %v", args, err)
	}
	if !cmd.ProcessState.Exited() {
		// Killed by a signal (ExitCode -1): say which, so a failure says why.
		errb.WriteString("\n(testbrood: brood " + cmd.ProcessState.String() + ")\n")
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// WriteFile writes data to path, making its directories; a failure fails the test.
func WriteFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
