package tasks_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestBrokenPipeIsQuiet runs brood as a real process whose stdout is a pipe
// nobody reads any more (brood ... | head after head exited): it ends with
// 141, as a process killed by SIGPIPE does, and says nothing on stderr
// (main printed "brood: write /dev/stdout: broken pipe", exit 1; and
// tasks show/output/log, --help and workflow list, which drop the write
// error, ended 0).
func TestBrokenPipeIsQuiet(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id := p.DispatchOK("scout", "what is in the README?")
	spec := p.Script("hi.yaml", "agents:\n  root:\n    - say: \"hello there\"\n")
	for _, args := range [][]string{{"agents"}, {"config", "list"}, {"tasks"}, {"tasks", "--json"}, {"tasks", "show", id}, {"tasks", "show", "--json", id},
		{"tasks", "tree"}, {"tasks", "output", id}, {"tasks", "log", id}, {"tasks", "--help"}, {"version"}, {"doctor"}, {"workflow", "list"}, {"agents", "show", "scout"},
		{"-p", "--model", spec, "go"}, {"-p", "--output-format", "json", "--model", spec, "go"}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // the reader is gone before brood writes
		cmd := exec.Command(exe, args...)
		cmd.Dir = p.Root
		cmd.Env = append(os.Environ(), clitest.TestMainEnv+"=1", "HOME="+p.Home, "BROOD_TRUST_PROJECT=1")
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &stderr
		err = cmd.Run()
		w.Close()
		code := cmd.ProcessState.ExitCode()
		// A run says on stderr what it does (its session, its totals), never
		// the failed write.
		if code != 141 || strings.Contains(stderr.String(), "broken pipe") || args[0] != "-p" && stderr.Len() != 0 {
			t.Errorf("brood %v into a closed pipe: exit %d (%v), stderr %q; want 141 and nothing", args, code, err, stderr.String())
		}
	}
}
