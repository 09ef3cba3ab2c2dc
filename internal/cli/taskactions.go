package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/tool"
)

// addTaskActions adds the verbs that act on a task: output, resume, kill, send.
func addTaskActions(tasks *cobra.Command, app *App) {
	tasks.AddCommand(newTasksOutputCmd(app), newTasksResumeCmd(app), newTasksKillCmd(app), newTasksSendCmd(app))
}

// taskDispatcher builds a dispatcher that can act on an existing task from
// the command line, at the depth of the task's parent. The task directory is
// the child's to write, so the cap and the permissions come from this
// project's settings, and the task's depth, model and workspace from its
// parent's owner record, never from the envelope.
func (a *App) taskDispatcher(t *dispatch.Task, onEvent func(delegate.Event)) (*delegate.Dispatcher, error) {
	depth, max := a.depth()
	taskDepth, model, ws := t.Depth, a.Settings.Model, ""
	if o := t.Owner; o != nil && o.Version > 0 {
		taskDepth, model, ws = o.Depth, firstNonEmpty(a.Settings.Model, o.Model), o.Workspace
	} else if t.Envelope != nil {
		// An owner record from an older brood kept no depth: the deeper of
		// what the records say, so a rewritten envelope cannot buy room.
		taskDepth = maxInt(t.Envelope.Depth, t.Depth)
		if t.Log != nil {
			taskDepth = maxInt(taskDepth, t.Log.Depth)
		}
		ws = t.Envelope.Workspace
	}
	if taskDepth-1 > depth {
		depth = taskDepth - 1
	}
	builtins, _ := selectTools("")
	// The task's own workspace, as long as it is inside this project.
	workspace := a.ProjectRoot
	if rel, err := filepath.Rel(a.ProjectRoot, ws); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && filepath.IsAbs(ws) {
		workspace = ws
	}
	cfg := delegate.Config{
		ProjectRoot: a.ProjectRoot, Workspace: workspace, Registry: a.registry(), Settings: a.Settings,
		Exe: a.childExe(), Args: childArgs(a),
		Depth: depth, MaxDepth: max, SourceAgent: "cli",
		ParentModel: model, ParentSystem: defaultSystemPrompt(workspace),
		ParentTools: builtins.Names(), Permissions: a.permissions(nil), OnEvent: onEvent, Stderr: a.Err,
		Redact: tool.NewRedactor(os.Environ()).Redact,
	}
	return delegate.New(cfg)
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func newTasksOutputCmd(app *App) *cobra.Command {
	var wait time.Duration
	var block, asJSON bool
	cmd := &cobra.Command{
		Use:   "output ID",
		Short: "Print a task's status and, once finished, its verified result",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := dispatch.LoadTask(app.ProjectRoot, args[0])
			if err != nil {
				return err
			}
			d, err := app.taskDispatcher(t, nil)
			if err != nil {
				return err
			}
			if block && wait == 0 {
				wait = 24 * time.Hour
			}
			status, text, err := d.Output(cmd.Context(), args[0], wait)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(app.Out, map[string]string{"task_id": args[0], "status": status, "output": text})
			}
			fmt.Fprintf(app.Out, "status: %s\n%s\n", status, strings.TrimRight(text, "\n"))
			return nil
		},
	}
	cmd.Flags().BoolVar(&block, "wait", false, "wait until the task finishes")
	cmd.Flags().DurationVar(&wait, "timeout", 0, "with --wait, give up after this long")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newTasksResumeCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resume ID PROMPT",
		Short: "Continue a task with a follow-up prompt, its whole transcript intact",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := dispatch.LoadTask(app.ProjectRoot, args[0])
			if err != nil {
				return err
			}
			out := newRenderer(app, map[bool]string{true: "json", false: "text"}[asJSON])
			d, err := app.taskDispatcher(t, out.dispatchEvent)
			if err != nil {
				return err
			}
			o, err := d.Resume(cmd.Context(), args[0], strings.Join(args[1:], " "))
			if err != nil {
				return err
			}
			return printOutcome(app, o, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printOutcome(app *App, o *delegate.Outcome, asJSON bool) error {
	if asJSON {
		if err := writeJSON(app.Out, map[string]any{"task_id": o.TaskID, "result": o.Result, "output": o.Output, "text": o.Text, "verification": o.Failures}); err != nil {
			return err
		}
		if len(o.Failures) > 0 {
			return ExitCode(1, nil)
		}
		return outcomeExit(o)
	}
	fmt.Fprint(app.Out, o.Text)
	if len(o.Failures) > 0 {
		return ExitCode(1, fmt.Errorf("task %s failed verification", o.TaskID))
	}
	return outcomeExit(o)
}

// outcomeExit maps how a task ended to the exit status, as brood run does:
// 1 for failed or killed, 130 for cancelled.
func outcomeExit(o *delegate.Outcome) error {
	if o.Result == nil {
		return nil
	}
	switch o.Result.Status {
	case dispatch.StatusFailed, dispatch.StatusKilled:
		return ExitCode(1, fmt.Errorf("task %s %s: %s", o.TaskID, o.Result.Status, o.Result.Error))
	case dispatch.StatusCancelled:
		return ExitCode(130, fmt.Errorf("task %s cancelled; resume it with: brood tasks resume %s \"...\"", o.TaskID, o.TaskID))
	}
	return nil
}

func newTasksKillCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "kill ID",
		Short: "Stop a running task (SIGTERM, then SIGKILL); it stays resumable",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := dispatch.LoadTask(app.ProjectRoot, args[0])
			if err != nil {
				return err
			}
			if t.Status != dispatch.StatusRunning || t.Log == nil {
				return fmt.Errorf("task %s is not running (status %s)", t.ID, t.Status)
			}
			// Recorded before any signal, in the project's records (out of
			// the child's reach): its owner and every listing then say a
			// person stopped it, never "cancelled" or "running".
			if err := dispatch.RecordKill(app.ProjectRoot, t.ID, "brood tasks kill"); err != nil {
				return fmt.Errorf("cannot record the kill of task %s: %w", t.ID, err)
			}
			pid := t.Log.PID
			_ = syscall.Kill(-pid, syscall.SIGTERM)
			grace := app.Settings.Pool.KillGrace.Duration
			if !waitGone(cmd.Context(), pid, t.ID, grace) {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				waitGone(cmd.Context(), pid, t.ID, grace)
			}
			if asJSON {
				return writeJSON(app.Out, map[string]any{"task_id": t.ID, "killed": true, "pid": pid})
			}
			fmt.Fprintf(app.Out, "stopped task %s (pid %d); resume it with: brood tasks resume %s \"...\"\n", t.ID, pid, t.ID)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// waitGone polls until the task's process is gone, up to d.
func waitGone(ctx context.Context, pid int, id string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if !dispatch.Alive(pid, id) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return !dispatch.Alive(pid, id)
}

func newTasksSendCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "send ID MESSAGE",
		Short: "Send a steering message to a running task (it arrives at its next turn)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := delegate.Send(app.ProjectRoot, args[0], "the user (brood tasks send)", strings.Join(args[1:], " ")); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(app.Out, map[string]any{"task_id": args[0], "queued": true})
			}
			fmt.Fprintf(app.Out, "message queued for task %s; it arrives at its next turn\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newSubagentCmd(app *App) *cobra.Command {
	var asJSON, background bool
	var isolation, modelSpec, description, permMode string
	var allow, deny []string
	cmd := &cobra.Command{
		Use:   "subagent TYPE PROMPT",
		Short: "Dispatch a subagent directly, bypassing the model's choice (validated against the registry)",
		Example: `  brood subagent explore "How does the auth middleware work?"
  brood subagent general-purpose "Add a --json flag to the export command and update its tests"`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec := firstNonEmpty(modelSpec, app.Settings.Model)
			if spec == "" {
				if _, err := resolveModel(app, ""); err != nil {
					return err
				}
			}
			out := newRenderer(app, map[bool]string{true: "json", false: "text"}[asJSON])
			tools, _ := selectTools("")
			perms := app.permissions(&runOptions{PermMode: permMode, Allow: allow, Deny: deny})
			d, err := app.dispatcher(spec, defaultSystemPrompt(app.Cwd), tools.Names(), perms, out.dispatchEvent, asJSON)
			if err != nil {
				return err
			}
			if d == nil {
				return errors.New("delegation is off here: this process is at the subagent depth cap")
			}
			prompt := strings.Join(args[1:], " ")
			req := delegate.Request{Agent: args[0], Prompt: prompt, Description: firstNonEmpty(description, firstLine(prompt, 80)), Isolation: isolation}
			if background {
				d.SetLifetime(cmd.Context())
				id, err := d.Start(req)
				if err != nil {
					return err
				}
				if asJSON {
					_ = writeJSON(app.Out, map[string]string{"task_id": id, "status": "started"})
				} else {
					fmt.Fprintf(app.Out, "task %s started; follow it with: brood tasks output %s --wait (Ctrl-C here stops it, and it stays resumable)\n", id, id)
				}
				d.WaitBackground()
				status, _, err := d.Output(cmd.Context(), id, 0)
				if err != nil {
					return err
				}
				fmt.Fprintf(app.Err, "task %s finished: %s\n", id, status)
				switch status {
				case dispatch.StatusFailed, dispatch.StatusKilled:
					return ExitCode(1, nil)
				case dispatch.StatusCancelled:
					return ExitCode(130, nil)
				}
				return nil
			}
			o, err := d.Dispatch(cmd.Context(), req)
			if err != nil {
				return err
			}
			return printOutcome(app, o, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&background, "background", false, "print the task id at once, then wait for it (Ctrl-C stops it; it stays resumable)")
	cmd.Flags().StringArrayVar(&allow, "allow", nil, "permission rule the subagent may use without asking, e.g. 'Bash(go test:*)' (repeatable)")
	cmd.Flags().StringArrayVar(&deny, "deny", nil, "permission rule to deny (repeatable)")
	cmd.Flags().StringVar(&permMode, "permission-mode", "", "default, acceptEdits, bypassPermissions or plan")
	cmd.Flags().StringVar(&isolation, "isolation", "", "worktree: run on an isolated copy of the tree")
	cmd.Flags().StringVar(&modelSpec, "model", "", "model as provider/model (default: settings or BROOD_MODEL)")
	cmd.Flags().StringVar(&description, "description", "", "a short label for the task (default: the prompt's first line)")
	return cmd
}
