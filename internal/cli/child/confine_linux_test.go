package child

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/childrun"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
)

// fullLogEnv makes the test binary a child (Main) whose Links.Full
// appends a line to the file it names each time it runs: "nnp=N", N this
// image's no_new_privs, which its sandbox sets.
const fullLogEnv = "CHILD_TEST_FULL_LOG"

func TestMain(m *testing.M) {
	if log := os.Getenv(fullLogEnv); log != "" {
		opts, ok := Parse(os.Args[1:])
		if !ok {
			fmt.Fprintln(os.Stderr, "not a child's command line:", os.Args[1:])
			os.Exit(ExitUsage)
		}
		stdio := IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv}
		os.Exit(Main(context.Background(), stdio, opts, Links{Full: loggingFull(log)}))
	}
	os.Exit(m.Run())
}

// loggingFull is a Links.Full that says it ran, and under what, in log;
// its model is none (the task fails, its result written).
func loggingFull(log string) func(context.Context, IO) (Setup, error) {
	return func(_ context.Context, stdio IO) (Setup, error) {
		nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
		if err != nil {
			return Setup{}, err
		}
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return Setup{}, err
		}
		_, err = fmt.Fprintf(f, "nnp=%d\n", nnp)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return Setup{IO: Wrap(stdio), Config: childrun.ChildConfig{
			ResolveModel: func(string) (model.Model, error) { return nil, errors.New("no model in this test") },
		}}, err
	}
}

// TestFullAfterTheSandbox: a brood child prepares itself (Links.Full: its
// Factory, its telemetry) only once it is in its sandbox, so a child whose
// sandbox re-executes it (no policy from its parent: it confines its own
// thread and re-executes) does that work once, in its confined image, not
// in the first one too. The test binary is the child; its Full logs each
// call with the image's no_new_privs.
func TestFullAfterTheSandbox(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("needs Landlock")
	}
	for _, tc := range []struct {
		name     string
		readOnly bool
	}{
		{"writer", false},
		{"read-only", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			td := taskdir.Open(root).MustTask(taskdir.NewID())
			if err := td.Create(); err != nil {
				t.Fatal(err)
			}
			env := dispatch.Envelope{TaskID: td.ID(), ReadOnly: tc.readOnly, ProjectRoot: root, Workspace: root, Model: "none/none"}
			envelope := filepath.Join(td.Path(), "envelope.json")
			if err := dispatch.WriteJSON(envelope, &env); err != nil {
				t.Fatal(err)
			}
			log := filepath.Join(td.Path(), "full.log") // the child may write its own task directory
			cmd := exec.Command(os.Args[0], "--mode", "json", "--task-id", td.ID(), "--envelope", envelope)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), fullLogEnv+"="+log, "HOME="+t.TempDir())
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			var res dispatch.Result
			if err := dispatch.ReadJSON(filepath.Join(td.Path(), dispatch.ResultFile), &res); err != nil {
				t.Fatalf("the child wrote no result: %v\n%s", err, out)
			}
			if !strings.Contains(res.Sandbox, "landlock") || !strings.Contains(res.Sandbox, "re-exec") {
				t.Fatalf("the child's sandbox %q, want landlock by its re-exec:\n%s", res.Sandbox, out)
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(b); got != "nnp=1\n" {
				t.Errorf("Links.Full ran %q: want once, in the sandboxed image (nnp=1)", got)
			}
		})
	}
}
