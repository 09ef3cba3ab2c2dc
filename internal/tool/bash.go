package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/termsafe"
)

// bashWaitDelay is how long Bash waits for the output pipes to close after
// the shell exits or is killed. A background grandchild that still holds the
// pipe would otherwise keep the call open for as long as it lives.
const bashWaitDelay = 2 * time.Second

// Bash runs a shell command in the workspace.
type Bash struct{}

type bashInput struct {
	Command     string  `json:"command"`
	Timeout     float64 `json:"timeout"`
	Description string  `json:"description"`
}

func (*Bash) Spec() model.ToolSpec {
	return spec("Bash", bashDescription, `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The command to execute"},
    "timeout": {"type": "number", "description": "Optional timeout in milliseconds (max 600000)"},
    "description": {"type": "string", "description": "Clear, concise description of what this command does in 5-10 words"}
  },
  "required": ["command"],
  "additionalProperties": false
}`)
}

func (*Bash) ReadOnly() bool { return false }

func (*Bash) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var in bashInput
	if r, ok := decode("Bash", input, &in); !ok {
		return r
	}
	if strings.TrimSpace(in.Command) == "" {
		return Errorf("command is empty: give the shell command to run")
	}
	timeout := env.bashTimeout()
	note := ""
	if in.Timeout > 0 {
		// Clamped in milliseconds first: a huge value must not overflow
		// into a negative duration that kills the command at once.
		timeout = time.Duration(min(in.Timeout, float64(maxBashTimeout/time.Millisecond)+1) * float64(time.Millisecond))
	}
	if timeout > maxBashTimeout {
		timeout, note = maxBashTimeout, fmt.Sprintf("(timeout lowered to the maximum, %v)\n", maxBashTimeout)
	}
	if env.Dir != "" {
		if info, err := os.Stat(env.Dir); err != nil || !info.IsDir() {
			return Errorf("the workspace directory %s is not usable (%v); the command was not run", env.Dir, err)
		}
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// brood's own provider keys are not the command's business: a model
	// could print them in ways redaction does not recognise (base64, rev).
	base := env.Environ
	if base == nil {
		base = os.Environ()
	}
	environ := withoutProviderKeys(base)
	redactor := env.Redactor
	if redactor == nil {
		redactor = NewRedactor(environ)
	}
	out := newCapture(env.outputLimit(), env.outputDir(), env.Spills)
	w := redactor.Writer(out)

	cmd := exec.CommandContext(runCtx, "bash", "-c", in.Command)
	cmd.Dir = env.Dir
	// Nothing can answer a prompt: pagers, editors and credential prompts
	// must not wait for a terminal that is not there.
	cmd.Env = append(environ, "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "EDITOR=true")
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = w, w
	// Its own group, so a timeout kills everything it started; and the
	// shell dies with brood, even when brood is killed with SIGKILL and
	// cannot clean up (Go threads that start processes never exit early).
	cmd.SysProcAttr = shellProcAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = bashWaitDelay

	start := time.Now()
	// The one launcher of a child's tool processes (Bash, its stdio MCP
	// servers): from a throw-away thread that holds nothing that reads a
	// sibling's /proc/PID/environ, without network under network: none,
	// in a group of its own that dies with that thread, which lives until
	// the shell is waited for.
	var err error
	c, serr := sandbox.StartCommandWith(cmd, sandbox.Walls{NoNetwork: env.NoNetwork, NoUnixSockets: env.NoUnixSockets})
	switch {
	case serr != nil && env.NoNetwork && cmd.Process == nil:
		err = fmt.Errorf("the command must run without network and cannot be, or could not start (%w); it was not run", serr)
	case serr != nil:
		err = serr
	default:
		if env.OnGroup != nil {
			env.OnGroup(cmd.Process.Pid, true)
		}
		err = c.Wait()
	}
	if errors.Is(err, exec.ErrWaitDelay) || runCtx.Err() != nil {
		// The shell is gone but something it started still holds the
		// output; or the call was cut short. Either way, end the group.
		_ = killGroup(cmd.Process)
	}
	if env.OnGroup != nil && cmd.Process != nil && groupGone(cmd.Process.Pid) {
		env.OnGroup(cmd.Process.Pid, false)
	}
	w.Close()
	// NUL and invalid UTF-8 in a command's output are escaped for the model.
	text := note + termsafe.Model(out.finish())

	var status []string
	var exitErr *exec.ExitError
	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		status = append(status, fmt.Sprintf("Command timed out after %v; it and every process it started were killed. Pass a larger timeout (ms, up to 600000) if it needs longer, or run less at once", timeout.Round(time.Millisecond)))
	case ctx.Err() != nil:
		status = append(status, "Command cancelled; it and every process it started were killed")
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = append(status, fmt.Sprintf("Command killed by signal %v", ws.Signal()))
		} else {
			status = append(status, fmt.Sprintf("Exit code %d", exitErr.ExitCode()))
		}
	case errors.Is(err, exec.ErrWaitDelay):
		status = append(status, "Note: background processes the command started still held its output and were killed; redirect a background process's output to a file (cmd > log 2>&1 &) to keep it running")
	case err != nil:
		return Errorf("could not run the command: %v", err)
	}
	if text == "" && len(status) == 0 {
		text = fmt.Sprintf("(no output; finished in %v)", time.Since(start).Round(time.Millisecond))
	}
	if len(status) > 0 {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += strings.Join(status, "\n")
	}
	return Result{Content: text, IsError: len(status) > 0 && !errors.Is(err, exec.ErrWaitDelay)}
}

// WithoutProviderKeys is env less brood's own provider keys: the
// environment of a child's tool processes (its Bash, the hooks it runs).
func WithoutProviderKeys(env []string) []string { return withoutProviderKeys(env) }

func withoutProviderKeys(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(providerKeys, name) {
			out = append(out, kv)
		}
	}
	return out
}

// groupGone reports whether no process is left in the group led by pid (a
// background job the command started would still be there).
func groupGone(pid int) bool {
	return errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH)
}

// killGroup sends SIGKILL to the process group led by p (the shell was
// started with Setpgid, so its group id is its pid): the shell, its
// children and their children all go, not just the shell.
func killGroup(p *os.Process) error {
	if p == nil {
		return nil
	}
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
