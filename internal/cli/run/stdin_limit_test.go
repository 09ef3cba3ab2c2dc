package run_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// TestBigStdinIsRefused (#28 item 9): 10 MB piped into brood -p is refused
// with a message naming its size, the limit and the flag that raises it,
// and nothing reaches the model; --max-stdin raises the limit; a bad
// --max-stdin is a usage error. Main sent it without a word.
func TestBigStdinIsRefused(t *testing.T) {
	p := clitest.NewDispatchProject(t, false)
	spec := p.Script("s.yaml", "agents:\n  root:\n    - say: \"read it all\"\n")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef\n"), 10<<20/17+1) // a little over 10 MB
	brood := func(args ...string) (int, string, string) {
		cmd := exec.Command(exe, args...)
		cmd.Dir = p.Root
		cmd.Env = append(os.Environ(), clitest.TestMainEnv+"=1", "HOME="+p.Home, "BROOD_TRUST_PROJECT=1")
		for k, v := range p.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(big), &stdout, &stderr
		_ = cmd.Run()
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	}

	code, out, errs := brood("-p", "--model", spec, "summarise this")
	want := "brood: stdin holds 10.0 MB, more than the 1.0 MB a prompt may (about 262k tokens): nothing was sent; pass a file for the agent to Read, or raise the limit with --max-stdin 11MB\n"
	if code != 1 || out != "" || errs != want {
		t.Errorf("10 MB on stdin: code %d, stdout %q, stderr %q; want 1 and\n%s", code, out, errs, want)
	}
	code, out, errs = brood("-p", "--max-stdin", "11MB", "--model", spec, "summarise this")
	if code != 0 || !strings.Contains(out, "read it all") {
		t.Errorf("--max-stdin 11MB: code %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = brood("-p", "--max-stdin", "lots", "--model", spec, "x")
	if code != 2 || !strings.Contains(errs, `--max-stdin "lots": want a size such as 4MB, 512KB or 1048576`) {
		t.Errorf("--max-stdin lots: code %d, stderr %q", code, errs)
	}
}
