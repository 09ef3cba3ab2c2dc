package cmdutil

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/hooks"
	"github.com/broodhq/brood/internal/spawn"
)

// HookRecords is where the root keeps its SubagentStart markers: the
// parent-owned records, out of every sandboxed child's reach.
func HookRecords(projectRoot string) string {
	return filepath.Join(dispatch.OwnersDir(projectRoot), "hooks")
}

// RunHooks is one root run's hooks: the session's, and the pairing of its
// subagents' starts and stops.
type RunHooks struct {
	s    *hooks.Session
	subs *hooks.Subagents
}

// OpenHooks loads the hooks (nil when none are configured), and fires the
// stops that an earlier, dead brood process owed.
func (f *Factory) OpenHooks(ctx context.Context, transcript, permMode, effort string) (*RunHooks, error) {
	cfg, warns, err := hooks.Load(hooks.Sources{Home: f.Home, ProjectRoot: f.ProjectRoot, Dir: f.Cwd, Trusted: f.ProjectTrusted, TrustedRuns: f.ProjectRunsTrusted, Only: f.SettingSources})
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		if !f.untrustedSaid(w) {
			fmt.Fprintln(f.Err, "brood:", w)
		}
	}
	r := hooks.New(cfg, hooks.Options{Dir: f.Cwd, ProjectDir: f.ProjectRoot, Env: f.Environ, Report: f.Err, Redact: f.Redactor.Redact})
	if r == nil {
		return nil, nil
	}
	c := hooks.Common{
		SessionID: strings.TrimSuffix(filepath.Base(transcript), ".jsonl"), TranscriptPath: transcript,
		Cwd: f.Cwd, PermissionMode: FirstNonEmpty(permMode, "default"), PromptID: ulid.Make().String(),
	}
	if effort != "" {
		c.Effort = &hooks.Effort{Level: effort}
	}
	h := &RunHooks{s: hooks.NewSession(r, c)}
	h.s.LateStops(ctx, HookRecords(f.ProjectRoot))
	h.subs = h.s.Subagents(f.ProjectRoot, HookRecords(f.ProjectRoot))
	return h, nil
}

// Observe wraps a dispatcher's event handler so that the hooks see every
// start and stop.
func (h *RunHooks) Observe(next func(spawn.Event)) func(spawn.Event) {
	if h == nil || h.subs == nil {
		return next
	}
	return func(e spawn.Event) {
		if next != nil {
			next(e)
		}
		if e.Type != "dispatch_start" && e.Type != "dispatch_stop" {
			return
		}
		h.subs.Observe(hooks.SubagentEvent{
			Start: e.Type == "dispatch_start", TaskID: e.TaskID, ParentTaskID: e.Parent, Via: e.Via,
			Agent: e.Agent, Description: e.Description, Depth: e.Depth, Status: e.Status, KilledBy: e.KilledBy,
		})
	}
}

// ToolHooks are the user's PreToolUse and PostToolUse hooks for the
// subagents' own tool calls, for a dispatcher's Config (each child asks the
// root over the child protocol; without such hooks, nil, no child asks).
func (h *RunHooks) ToolHooks() spawn.ToolHooks {
	if h == nil {
		return nil
	}
	if ct := h.s.ChildTools(); ct != nil {
		return ct
	}
	return nil
}

// Background lists a dispatcher's running background tasks for the hooks.
func (h *RunHooks) Background(d *spawn.Dispatcher) {
	if h == nil || d == nil {
		return
	}
	h.s.Background = func() []hooks.BackgroundTask {
		var out []hooks.BackgroundTask
		for _, id := range d.Running() {
			out = append(out, hooks.BackgroundTask{ID: id, Type: "subagent", Status: "running"})
		}
		return out
	}
}

// Close waits for the subagents' hooks.
func (h *RunHooks) Close() {
	if h != nil {
		h.subs.Close()
	}
}

// Session is the run's hooks session (nil: none).
func (h *RunHooks) Session() *hooks.Session {
	if h == nil {
		return nil
	}
	return h.s
}

// Prompt fires SessionStart and UserPromptSubmit and returns the prompt
// with the context their hooks add.
func (h *RunHooks) Prompt(ctx context.Context, prompt string, resume bool) (string, error) {
	if h == nil {
		return prompt, nil
	}
	source := "startup"
	if resume {
		source = "resume"
	}
	extra, err := h.s.Start(ctx, source)
	if err != nil {
		return "", err
	}
	more := ""
	if prompt != "" {
		if more, err = h.s.Prompt(ctx, prompt); err != nil {
			return "", err
		}
	}
	for _, c := range []string{extra, more} {
		if c != "" {
			prompt += "\n\n" + c
		}
	}
	return prompt, nil
}
