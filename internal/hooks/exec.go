package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/textline"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// maxOutput bounds what is kept of a hook's stdout and stderr each.
const maxOutput = 1 << 20

// capped is a bytes.Buffer that keeps the first maxOutput bytes.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Starter starts cmd and returns the function that waits for it.
type Starter func(cmd *exec.Cmd) (wait func() error, err error)

// ran is what one command did.
type ran struct {
	cmd      Command
	exit     int // -1: did not run to an exit (start failure, timeout)
	stdout   string
	stderr   string
	err      error
	duration time.Duration
	// refused says why the command was not run at all (a file it runs
	// changed since the hooks were loaded).
	refused string
}

// runCommand runs one hook with payload on stdin under its timeout, in its
// own process group (killed whole when the timeout ends). It is not
// cancelled with ctx: a hook that started runs to its end or its timeout,
// so that a stop event is never cut off by the cancel that caused it.
//
// start starts cmd and returns its wait (nil: cmd.Start and cmd.Wait):
// a child's launcher of its tool processes (sandbox.StartCommand).
func runCommand(ctx context.Context, c Command, dir string, env []string, payload []byte, start Starter) ran {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout())
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.Command)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb capped
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	began := time.Now()
	if start == nil {
		start = func(cmd *exec.Cmd) (func() error, error) { return cmd.Wait, cmd.Start() }
	}
	wait, err := start(cmd)
	if err == nil {
		err = wait()
	}
	r := ran{cmd: c, exit: -1, stdout: out.String(), stderr: errb.String(), duration: time.Since(began)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.err = fmt.Errorf("timed out after %s", c.timeout())
	case err == nil:
		r.exit = 0
	case errors.As(err, &ee) && ee.Exited():
		r.exit = ee.ExitCode()
	default:
		r.err = err
	}
	return r
}

// Output is the JSON a hook may print on stdout (Claude Code's fields).
type Output struct {
	Continue           *bool     `json:"continue,omitempty"`
	StopReason         string    `json:"stopReason,omitempty"`
	SuppressOutput     bool      `json:"suppressOutput,omitempty"`
	SystemMessage      string    `json:"systemMessage,omitempty"`
	Decision           string    `json:"decision,omitempty"` // block (approve/block: PreToolUse's older spelling)
	Reason             string    `json:"reason,omitempty"`
	HookSpecificOutput *Specific `json:"hookSpecificOutput,omitempty"`
}

// Specific is hookSpecificOutput.
type Specific struct {
	HookEventName            string          `json:"hookEventName,omitempty"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"` // allow | deny | ask
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
	AdditionalContext        string          `json:"additionalContext,omitempty"`
}

// Permission decisions of PreToolUse.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
)

// Result is what the hooks of one event decided, combined.
type Result struct {
	// Block is set by exit code 2 or "decision": "block"; Reason is the
	// hook's stderr or reason, for the model (or, for UserPromptSubmit, the
	// user).
	Block  bool
	Reason string
	// Permission is PreToolUse's combined decision (deny > ask > allow),
	// with the reasons given.
	Permission       string
	PermissionReason string
	UpdatedInput     json.RawMessage
	// Context is additionalContext (and, for SessionStart and
	// UserPromptSubmit, plain stdout) for the model.
	Context []string
	// Stop is "continue": false: the whole run stops, with StopReason.
	Stop       bool
	StopReason string
	// Messages are systemMessage texts for the user.
	Messages []string
	// Failures are hooks that failed: reported to the user, never fatal.
	Failures []string
	// failed are the same, by command: what a child sends up (RunHere).
	failed []protocol.HookFailure
}

// fail records that x's command failed, with why (one line).
func (r *Result) fail(x ran, text, why string) {
	r.Failures = append(r.Failures, text)
	r.failed = append(r.failed, protocol.HookFailure{Command: x.cmd.Command, Line: firstLine(why)})
}

func rank(d string) int {
	switch d {
	case Allow:
		return 1
	case Ask:
		return 2
	case Deny:
		return 3
	}
	return 0
}

// add folds one command's outcome into r.
func (r *Result) add(event string, x ran) {
	name := firstLine(x.cmd.Command)
	switch {
	case x.refused != "":
		why := fmt.Sprintf("%s hook %q not run: %s", event, name, x.refused)
		r.fail(x, why, "not run: "+x.refused)
		if event == PreToolUse {
			// A guard that cannot run does not let the call through.
			r.permission(Deny, why)
		}
		return
	case x.err != nil:
		r.fail(x, fmt.Sprintf("%s hook %q failed: %v", event, name, x.err), x.err.Error())
		return
	case x.exit == 2:
		r.Block = true
		r.Reason = join(r.Reason, strings.TrimSpace(x.stderr))
		return
	case x.exit != 0:
		r.fail(x, fmt.Sprintf("%s hook %q exited with status %d: %s", event, name, x.exit, firstLine(x.stderr)),
			fmt.Sprintf("exit status %d: %s", x.exit, firstLine(x.stderr)))
		return
	}
	out := strings.TrimSpace(x.stdout)
	if !strings.HasPrefix(out, "{") {
		if out != "" && (event == SessionStart || event == UserPromptSubmit) {
			r.Context = append(r.Context, out)
		}
		return
	}
	var o Output
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		r.fail(x, fmt.Sprintf("%s hook %q printed JSON brood cannot read: %v", event, name, err), "printed JSON brood cannot read: "+err.Error())
		return
	}
	r.addOutput(event, o)
}

func (r *Result) addOutput(event string, o Output) {
	if o.Continue != nil && !*o.Continue {
		r.Stop, r.StopReason = true, join(r.StopReason, o.StopReason)
	}
	if o.SystemMessage != "" {
		r.Messages = append(r.Messages, o.SystemMessage)
	}
	switch o.Decision {
	case "block":
		if event == PreToolUse {
			r.permission(Deny, o.Reason)
		} else {
			r.Block, r.Reason = true, join(r.Reason, o.Reason)
		}
	case "approve":
		if event == PreToolUse {
			r.permission(Allow, o.Reason)
		}
	}
	s := o.HookSpecificOutput
	if s == nil {
		return
	}
	if s.PermissionDecision != "" && event == PreToolUse {
		if rank(s.PermissionDecision) > 0 {
			r.permission(s.PermissionDecision, s.PermissionDecisionReason)
		} else {
			r.Failures = append(r.Failures, fmt.Sprintf("%s hook: unknown permissionDecision %q (allow, deny or ask)", event, s.PermissionDecision))
		}
	}
	if len(s.UpdatedInput) > 0 && string(s.UpdatedInput) != "null" && event == PreToolUse {
		r.UpdatedInput = s.UpdatedInput
	}
	if s.AdditionalContext != "" {
		r.Context = append(r.Context, s.AdditionalContext)
	}
}

func (r *Result) permission(d, reason string) {
	if rank(d) > rank(r.Permission) {
		r.Permission, r.PermissionReason = d, reason
	} else if d == r.Permission {
		r.PermissionReason = join(r.PermissionReason, reason)
	}
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

func firstLine(s string) string { return textline.Summary(s, 200) }
