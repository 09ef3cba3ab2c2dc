// Package attack_test is brood's attack suite: a hostile child, a hostile
// repository and a loaded machine, tried through the real CLI in real
// processes. Every case is one that broke brood once (or one that held and
// must stay held). One file per area: records_test.go (task directory,
// envelope, verdicts, statuses), procs_test.go (pids, process escapes, depth),
// trust_test.go (configuration, project trust, terminal safety, secrets).
package attack_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/testbrood"
)

// mainEnv makes the test binary act as brood when it is set to "1".
const mainEnv = "BROOD_ATTACK_TEST_MAIN"

func TestMain(m *testing.M) { testbrood.Main(m, mainEnv) }

// project is a temporary git repository with its own HOME, in which brood
// runs as a real process.
type project struct {
	t    *testing.T
	root string
	home string
	env  []string
}

func newProject(t *testing.T, files map[string]string) *project {
	t.Helper()
	root, home := t.TempDir(), t.TempDir()
	if files == nil {
		files = map[string]string{"README.md": "# Sample\n", "main.go": "package main\n\nfunc main() {}\n"}
	}
	for name, body := range files {
		writeFile(t, filepath.Join(root, name), body)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &project{t: t, root: root, home: home, env: []string{
		mainEnv + "=1", "HOME=" + home, "BROOD_CHILD_EXE=" + exe, "PATH=" + os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost",
	}}
	p.git("init", "-q")
	p.git("add", "-A")
	p.git("commit", "-qm", "init")
	return p
}

func (p *project) git(args ...string) string {
	p.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = p.root
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// script writes a scripted-model file under .brood and returns its --model value.
func (p *project) script(name, yaml string) string {
	p.t.Helper()
	path := filepath.Join(p.root, ".brood", name)
	writeFile(p.t, path, yaml)
	return "script:" + path
}

// brood runs brood as a real process in the project and returns its exit
// code, stdout and stderr. extraEnv entries are KEY=VALUE.
func (p *project) brood(ctx context.Context, extraEnv []string, args ...string) (code int, stdout, stderr string) {
	p.t.Helper()
	exe, _ := os.Executable()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = p.root
	cmd.Env = append(append([]string{}, p.env...), extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && cmd.ProcessState == nil {
		p.t.Fatalf("brood %v: %v", args, err)
	}
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHarness checks the harness itself: brood runs as a real process and
// answers --help.
func TestHarness(t *testing.T) {
	p := newProject(t, nil)
	code, out, errs := p.brood(t.Context(), nil, "--help")
	if code != 0 || !bytes.Contains([]byte(out+errs), []byte("brood")) {
		t.Fatalf("brood --help: code %d\n%s\n%s", code, out, errs)
	}
}
