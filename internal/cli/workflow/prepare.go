package workflow

import (
	"context"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/root"
	wf "github.com/broodhq/brood/internal/workflow"
)

// Prepared is a plan file read, checked and with its inputs resolved,
// ready to run: what the interactive mode's /workflow approves and starts.
type Prepared struct {
	f    *cmdutil.Factory
	file string
	c    *checked
}

// Prepare reads, parses and checks a plan file and resolves its inputs
// (name=value), as brood workflow run does before it asks.
func Prepare(f *cmdutil.Factory, file string, inputs []string) (*Prepared, error) {
	c, err := load(depsFrom(f, &root.FleetFlags{}), file, inputs, true)
	if err != nil {
		return nil, err
	}
	return &Prepared{f: f, file: file, c: c}, nil
}

// Name is the plan's name.
func (p *Prepared) Name() string { return p.c.plan.Name }

// Describe is the plan's one-line shape with its agent-count estimate.
func (p *Prepared) Describe() string { return describe(p.c) }

// Estimate is how many agents it will start.
func (p *Prepared) Estimate() string { return p.c.est.String() }

// Warnings are the checker's warnings.
func (p *Prepared) Warnings() []string { return p.c.report.Warnings }

// Run runs the plan on the local engine with runner (the caller's
// dispatcher, so its agents are the caller's children).
func (p *Prepared) Run(ctx context.Context, runner call.Runner, events func(wf.Event), started func(runID string)) (*wf.Result, error) {
	cfg := local.Config{ProjectRoot: p.f.ProjectRoot, Runner: runner, Concurrency: p.f.Settings.Pool.Concurrency}
	if p.f.Redactor != nil {
		cfg.Redact = p.f.Redactor.Redact
	}
	eng := local.New(cfg)
	return eng.Run(ctx, engine.RunRequest{Plan: p.c.plan, Source: p.file, Inputs: p.c.inputs, Events: events, Started: started})
}
