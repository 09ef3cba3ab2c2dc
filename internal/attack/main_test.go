// Package attack_test is brood's attack suite: a hostile child, a hostile
// repository and a loaded machine, tried through the real CLI in real
// processes. Every case is one that broke brood once (or one that held and
// must stay held). One file per area: records_test.go (task directory,
// envelope, verdicts, statuses), procs_test.go (pids, process escapes, depth),
// trust_test.go (configuration, project trust, terminal safety, secrets).
package attack_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/mcpclient/mcptest"
	"github.com/broodhq/brood/internal/testbrood"
)

// mainEnv makes the test binary act as brood when it is set to "1".
const mainEnv = "BROOD_ATTACK_TEST_MAIN"

// TestMain makes the test binary brood (mainEnv), the notes MCP server
// (mcptest, for the trust gates' servers), a ptrace prober or a sleeper, or
// the tests.
func TestMain(m *testing.M) {
	mcptest.ServeIfAsked()
	if pid := os.Getenv(ptraceEnv); pid != "" {
		os.Exit(tryPtrace(pid))
	}
	if os.Getenv(metaProbeEnv) != "" {
		os.Exit(metaProbe(os.Args[1:]))
	}
	if arg := os.Getenv(hostProbeEnv); arg != "" {
		os.Exit(hostProbe(arg))
	}
	if arg := os.Getenv(sleeperEnv); arg != "" {
		os.Exit(execSleeper(arg))
	}
	testbrood.Main(m, mainEnv)
}

// project is a temporary git repository with its own HOME, in which brood
// runs as a real process (testbrood.Project).
type project struct {
	*testbrood.Project
	t    *testing.T
	root string
	home string
}

func newProject(t *testing.T, files map[string]string) *project {
	t.Helper()
	tp := testbrood.NewProject(t, mainEnv, files)
	return &project{Project: tp, t: t, root: tp.Root, home: tp.Home}
}

func (p *project) git(args ...string) string { p.t.Helper(); return p.Git(args...) }

// script writes a scripted-model file under .brood and returns its --model value.
func (p *project) script(name, yaml string) string { p.t.Helper(); return p.Script(name, yaml) }

// brood runs brood as a real process in the project and returns its exit
// code, stdout and stderr. extraEnv entries are KEY=VALUE.
func (p *project) brood(ctx context.Context, extraEnv []string, args ...string) (code int, stdout, stderr string) {
	p.t.Helper()
	return p.Brood(ctx, extraEnv, args...)
}

func writeFile(t *testing.T, path, data string) { t.Helper(); testbrood.WriteFile(t, path, data) }

// childBash is the attack most cases share: `brood run` (bypassPermissions)
// whose root hands one general-purpose child the Bash command cmd, which
// ends by writing tried.txt. It fails t unless the run ended ("root done")
// and the child got that far (else the test never reached its scenario),
// and returns the run's stderr for the case's own checks.
func (p *project) childBash(name, cmd string) (errs string) {
	p.t.Helper()
	mdl := p.script(name+".yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: `+name+`, prompt: "go"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: `+strconv.Quote(cmd)+`}
    - say: "child done"
`)
	code, out, errs := p.brood(p.t.Context(), nil, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
	if code != 0 || !strings.Contains(out, "root done") {
		p.t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(p.root, "tried.txt")); err != nil {
		p.t.Fatalf("the child never tried (no tried.txt: %v): the test did not reach its scenario\n%s", err, errs)
	}
	return errs
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

// serveMCPHTTP starts `brood mcp --http` on a loopback port in the project
// with model mdl (and args), stopped when the test ends, and returns where it serves
// and the file its token is in (both from what it says on stderr).
func (p *project) serveMCPHTTP(mdl string, args ...string) (url, tokenFile string) {
	p.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		p.t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Dir, cmd.Env = p.root, append(append([]string{}, p.Env...), "BROOD_MODEL="+mdl)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	done := make(chan struct{})
	p.t.Cleanup(func() { cmd.Process.Kill(); <-done })
	sc := bufio.NewScanner(stderr)
	for tokenFile == "" && sc.Scan() {
		if _, u, ok := strings.Cut(sc.Text(), "serving streamable HTTP on "); ok {
			url = u
		}
		if _, f, ok := strings.Cut(sc.Text(), "the token is in "); ok {
			tokenFile = f
		}
	}
	go func() {
		for sc.Scan() {
		}
		cmd.Wait()
		close(done)
	}()
	if url == "" || tokenFile == "" {
		p.t.Fatalf("brood mcp --http did not say where it serves (%q) and where its token is (%q)", url, tokenFile)
	}
	return url, tokenFile
}
