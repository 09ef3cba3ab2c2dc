package childrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/spawntrace"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/tool"
)

// Confined is a child past its sandbox: its envelope read and checked,
// the sandbox the envelope calls for entered (Confine). Nothing else of
// the child's configuration is needed to get here, so a child whose
// sandbox re-executes it (a writer that mounts first) does nothing in its
// first image that its second does again.
type Confined struct {
	env  dispatch.Envelope
	path string // the envelope's
	dir  string // the task directory
	sb   sandbox.Status
	// passed are the secret values the parent handed down (PassSecrets):
	// its environment's secret-looking variables' and the .env values.
	passed tool.Secrets
}

// RunChild runs the task of an envelope to its end and writes result.json:
// Confine, then Run. It returns an error only when there is no task to run
// (bad envelope); every run that starts ends in a result on disk.
func RunChild(ctx context.Context, cfg ChildConfig) error {
	c, err := Confine(ctx, cfg.EnvelopePath, cfg.TaskID)
	if err != nil {
		return err
	}
	return c.Run(ctx, cfg)
}

// Confine reads and checks the envelope at path (of task taskID, "" any)
// and puts this process in the sandbox it calls for (isolate.RestrictChild),
// which may re-execute the program from its start: call it before
// anything that cannot be repeated, and before anything not needed to get
// here (the rest of the child's configuration).
func Confine(ctx context.Context, path, taskID string) (*Confined, error) {
	// First of all: no sibling of the same uid may ptrace this process or
	// read its memory or environment through /proc.
	if err := sandbox.Undumpable(); err != nil {
		return nil, err
	}
	c := &Confined{path: path, dir: filepath.Dir(path)}
	if err := dispatch.ReadJSON(path, &c.env); err != nil {
		return nil, fmt.Errorf("--envelope %s: %w", path, err)
	}
	if taskID != "" && taskID != c.env.TaskID {
		return nil, fmt.Errorf("--task-id %s does not match the envelope's task %s", taskID, c.env.TaskID)
	}
	if err := dispatch.CheckID(c.env.TaskID); err != nil {
		return nil, fmt.Errorf("--envelope %s: %w", path, err)
	}
	spawntrace.Mark(ctx, "envelope")
	// Nothing may have been written to the parent yet: Restrict may
	// re-execute this process under Landlock.
	sb, err := isolate.RestrictChild(&c.env, c.dir)
	if err != nil {
		return nil, err
	}
	c.sb = sb
	// The project's .env values as the parent read them from the real
	// tree: this child's copy or view may hide the files (an isolated
	// copy leaves ignored files out, a Read deny hides them). Taken in
	// the image that runs the task (a re-exec keeps the descriptor) and
	// before anything is started that would inherit it.
	if c.passed, err = tool.TakePassedSecrets(); err != nil {
		return nil, err
	}
	spawntrace.Mark(ctx, "sandbox")
	return c, nil
}

// Run runs the confined child's task with cfg (its EnvelopePath and
// TaskID are Confine's) to its end and writes result.json.
func (c *Confined) Run(ctx context.Context, cfg ChildConfig) error {
	env, dir := &c.env, c.dir
	cfg.EnvelopePath = c.path
	protocolFDsCloseOnExec()
	defer spawntrace.Write(ctx, dir, spawntrace.ChildFile) // the bench's, never the run's: an error is ignored
	spawntrace.Mark(ctx, "configured")
	ctx = telemetry.NewContext(telemetry.WithParent(ctx, env.TraceParent), cfg.Telemetry)
	if cfg.Redactor == nil {
		// One for everything the child writes and its tools' output, made
		// at its first use (the started event below, past the sandbox).
		cfg.Redactor = tool.NewChildRedactor(os.Environ(), c.passed, projectRoots(env)...)
	}
	cfg.Telemetry.SetRedact(cfg.Redactor.Redact) // its spans know what its parent passed too
	out := &events{up: protocol.NewRedactingWriter(cfg.Stdout, cfg.Redactor.Redact)}
	out.send(protocol.Started{TaskID: env.TaskID, PID: os.Getpid()})

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if cfg.Stdin != nil {
		link := &parentLink{out: out, hookFilter: cfg.HookFilter}
		go link.read(cfg.Stdin, func() { cancel(errors.New("the parent process exited")) })
		if cfg.AskParent {
			cfg.link = link
		}
		cfg.up = link
	}
	stopPing := heartbeat(out, time.Duration(env.PingMS)*time.Millisecond)
	defer stopPing()

	res := runTask(ctx, cfg, env, dir, out, c.sb)
	if cause := context.Cause(ctx); cause != nil && res.Status == dispatch.StatusCancelled && res.Error == "" {
		res.Error = cause.Error()
	}
	if err := dispatch.WriteJSON(filepath.Join(dir, dispatch.ResultFile), res); err != nil {
		// Said to the parent too (it may be unable to read our stderr).
		err = fmt.Errorf("write result.json: %w", err)
		out.send(protocol.Result{Status: dispatch.StatusFailed, Usage: res.Usage, ChildUsage: res.ChildUsage, Error: err.Error()})
		return err
	}
	out.send(protocol.Result{Status: res.Status, Usage: res.Usage, ChildUsage: res.ChildUsage})
	return nil
}

// projectRoots are the projects whose .env values a child redacts: the
// envelope's (its tools' Redactor read it) and its working directory's
// (an isolated worktree copy is a project of its own), once if the same.
func projectRoots(env *dispatch.Envelope) []string {
	roots := []string{env.ProjectRoot}
	cwd, err := os.Getwd()
	if err != nil {
		return roots
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real // an isolated child's copy is mounted over the real directory; $PWD may name a link
	}
	if own := taskdir.FindProjectRoot(cwd); own != env.ProjectRoot {
		roots = append(roots, own)
	}
	return roots
}
