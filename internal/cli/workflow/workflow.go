// Package workflow is the `brood workflow` command: run, validate, resume,
// cancel, list and show declarative multi-agent plans (see
// docs/workflows.md). It parses and checks plans with package workflow and
// runs them through an engine.Engine; it holds no engine logic itself.
package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/root"
)

// Deps are what the verbs take from the factory: the streams, whether a
// person is at the terminal, the engine and the agents a plan may name.
type Deps struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// IsTerminal reports whether a person is at the terminal to ask.
	IsTerminal func() bool
	// Engine builds the engine runs go through (called when a verb runs).
	Engine func(ctx context.Context) (engine.Engine, error)
	// Agents lists the agent types a plan may name.
	Agents func() []string
	// Observe starts what watches a run — the user's hooks (SubagentStart
	// and SubagentStop of its agents) and OpenTelemetry export, when
	// configured — and returns ctx carrying them and the function that
	// waits for the hooks and flushes the export.
	Observe func(ctx context.Context) (context.Context, func(), error)
	// Engines is --engine and the fleet.
	Engines Engines
	// Records is the local engine for the verbs that only read or mark
	// runs (list, show, cancel): it needs no model (nil: Engine).
	Records func() engine.Engine
	// ProjectRoot is the project whose kept fleet results list and show
	// read when the fleet does not answer (nil or "": none); a function,
	// as the project is found when a verb runs.
	ProjectRoot func() string
}

func (d *Deps) projectRoot() string {
	if d.ProjectRoot == nil {
		return ""
	}
	return d.ProjectRoot()
}

func (d *Deps) observe(ctx context.Context) (context.Context, func(), error) {
	if d.Observe == nil {
		return ctx, func() {}, nil
	}
	return d.Observe(ctx)
}

// NewCmdWorkflow builds `brood workflow` and its verbs. runF, when set,
// replaces what `run` does (tests).
func NewCmdWorkflow(cf *cmdutil.Factory, runF func(*RunOptions) error) *cobra.Command {
	fleetFlags := &root.FleetFlags{}
	f := depsFrom(cf, fleetFlags)
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "Run declarative multi-agent plans: parallel calls, pipelines per item, votes, until-quiet",
		Long: `A workflow is a plan file (YAML, TOML or JSON; schema in docs/workflow.schema.json)
whose phases run many subagents with one approval: parallel calls, an each pipeline
per item, until_quiet rounds and majority votes, in waves by depends_on. Every run
is journaled under .brood/workflows/<run_id>/: a run interrupted at any moment
continues with brood workflow resume RUN_ID without re-running a finished call.`,
		Example: `  brood workflow validate examples/workflows/review-packages.yaml
  brood workflow run examples/workflows/review-packages.yaml --input dir=internal --yes
  brood workflow list
  brood workflow resume 01JD...`,
	}
	// A verb that does not exist is a usage error (exit 2), as for every
	// command; cobra would print the help and exit 0.
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		hint := ""
		cmd.SuggestionsMinimumDistance = 2
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			hint = fmt.Sprintf("; did you mean %q?", s[0])
		}
		return cmdutil.UsageError("unknown command %q for brood workflow%s (brood workflow --help lists them)", args[0], hint)
	}
	f.addEngineFlag(cmd)
	fleetFlags.AddPersistentFlags(cmd)
	cmd.AddCommand(newCmdRun(f, runF), newCmdValidate(f), newCmdResume(f), newCmdCancel(f), newCmdList(f), newCmdShow(f))
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// notFound turns an engine's not-found into a line that says what to do.
func notFound(err error, id string) error {
	if errors.Is(err, engine.ErrNotFound) {
		return fmt.Errorf("no workflow run %s here; brood workflow list shows the runs", id)
	}
	return err
}
