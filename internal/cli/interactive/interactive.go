// Package interactive is bare `brood` on a terminal: the flags that open
// the interactive mode (--continue, --resume, --model) and the wiring of
// the TUI (internal/tui) to the same engine as `brood run`.
package interactive

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/root"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/tui"
)

// Options are the root command's flags for the interactive mode.
type Options struct {
	Factory  *cmdutil.Factory
	Continue bool
	Resume   string
	Model    string
	// Depth is --max-subagent-depth and --enable-subagents, as brood run
	// takes them.
	Depth cmdutil.DepthFlags
	// Kill stops a task in stages (brood tasks kill's), and Workflow
	// checks a plan file with its inputs for /workflow (brood workflow
	// run's): the command tree gives them (a verb imports no other verb).
	Kill     func(ctx context.Context, id string) error
	Workflow func(file string, inputs []string) (tui.Workflow, error)
}

// AddFlags adds the interactive mode's flags to the root command.
func AddFlags(root *cobra.Command, f *cmdutil.Factory) *Options {
	o := &Options{Factory: f}
	fl := root.Flags()
	fl.BoolVarP(&o.Continue, "continue", "c", false, "interactive mode: reopen the latest session of this project")
	fl.StringVar(&o.Resume, "resume", "", "interactive mode: reopen the session with this id")
	fl.StringVar(&o.Model, "model", "", "interactive mode: the model as provider/model")
	o.Depth.Bind(root)
	return o
}

// Wanted reports whether the flags ask for the interactive mode.
func (o *Options) Wanted() bool { return o.Continue || o.Resume != "" }

// Run opens the TUI when stdin and stdout are a terminal; ran is false
// (and nothing happened) when they are not.
func Run(ctx context.Context, o *Options) (ran bool, err error) {
	f := o.Factory
	in, out, ok := f.Terminal()
	if !ok {
		if o.Wanted() {
			return false, errors.New("--continue and --resume open the interactive mode, which needs a terminal; elsewhere continue a session with brood run --session FILE")
		}
		return false, nil
	}
	if err := askTrust(f, trustAsk{in: in, out: out, now: time.Now()}); err != nil {
		return true, err
	}
	if err := o.Depth.Apply(f); err != nil {
		return true, err
	}
	cfg, rt, err := config(ctx, f, o)
	if err != nil {
		return true, err
	}
	defer rt.Close()
	return true, tui.Run(telemetry.NewContext(ctx, rt.Telemetry), cfg, in, out, f.Err)
}

// resumeID resolves --resume: a session id, a unique prefix of one in any
// case (as brood run --resume takes it), or a transcript's path.
func resumeID(projectRoot, resume string) (string, error) {
	if resume == "" || strings.HasSuffix(resume, ".jsonl") {
		return resume, nil
	}
	files, _ := filepath.Glob(filepath.Join(taskdir.Open(projectRoot).SessionsDir(), "*.jsonl"))
	ids := make([]string, 0, len(files))
	for _, p := range files {
		ids = append(ids, strings.TrimSuffix(filepath.Base(p), ".jsonl"))
	}
	// Among the user's own sessions only (as brood run --resume): one a
	// repository shipped never makes the user's prefix ambiguous, nor wins.
	dir := taskdir.Open(projectRoot).SessionsDir()
	mine, _ := session.Split(dir, ids)
	id, err := cmdutil.ResolveID("session", resume, mine)
	if err != nil {
		if other, oerr := cmdutil.ResolveID("session", resume, ids); oerr == nil && !slices.Contains(mine, other) {
			return "", fmt.Errorf("--resume: %w", session.Mine(filepath.Join(dir, other+".jsonl")))
		}
		return "", fmt.Errorf("--resume: %w in %s; brood --continue reopens the latest", err, dir)
	}
	return id, nil
}

// config builds the TUI's engine on the root brood run's is (package
// root): the same model, tools, tool environment and redactor, hooks and
// telemetry; the TUI opens the transcript itself (it may switch sessions)
// and builds the dispatcher with its own event sink (Root.NewDispatcher).
func config(ctx context.Context, f *cmdutil.Factory, o *Options) (tui.Config, *root.Root, error) {
	resume, err := resumeID(f.ProjectRoot, o.Resume)
	if err != nil {
		return tui.Config{}, nil, err
	}
	path, err := tui.SessionPath(f.ProjectRoot, resume, o.Continue, f.Err)
	if err != nil {
		return tui.Config{}, nil, err
	}
	prices, err := f.Prices()
	if err != nil {
		return tui.Config{}, nil, err
	}
	// Quiet: the TUI owns the terminal, so no [DISPATCH] lines on stderr
	// (BROOD_DEBUG_AGENT_LOG=1 tees them to a file).
	rt, err := root.New(ctx, f, root.Options{Agent: true, Model: o.Model, Transcript: path, Interactive: true, Quiet: true, Warm: true})
	if err != nil {
		return tui.Config{}, nil, err
	}
	cfg := tui.Config{
		ProjectRoot: f.ProjectRoot, ModelSpec: rt.Spec, ResolveModel: f.ResolveModel,
		Agent:         rt.Agent,
		NewDispatcher: rt.NewDispatcher,
		Registry:      f.Registry(),
		Session:       path,
		Prices:        prices,
		Kill:          o.Kill,
		Redact:        rt.Redact,
		Getenv:        f.Getenv,
		Workflow:      o.Workflow,
		OwnLocal:      f.OwnsLocalContent,
	}
	// The user's hooks: SessionStart now, UserPromptSubmit at each prompt.
	if sess := rt.Hooks.Session(); sess != nil {
		if _, err := sess.Start(ctx, map[bool]string{true: "resume", false: "startup"}[path != ""]); err != nil {
			rt.Close()
			return tui.Config{}, nil, err
		}
		cfg.BeforePrompt = func(ctx context.Context, prompt string) (string, error) {
			extra, err := sess.Prompt(ctx, prompt)
			if err != nil || extra == "" {
				return prompt, err
			}
			return prompt + "\n\n" + extra, nil
		}
	}
	return cfg, rt, nil
}
