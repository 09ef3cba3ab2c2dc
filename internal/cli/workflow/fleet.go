package workflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/engine"
	localeng "github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/root"
	"github.com/broodhq/brood/internal/taskdir"
)

// Engines picks where runs go: --engine local (the default) or temporal;
// listings and the verbs that name a run look at both when a fleet is
// configured.
type Engines struct {
	// Name is --engine.
	Name string
	// Given: --engine was on the command line. `workflow list` and
	// `show` then look at that engine's runs only (local: no fleet is
	// asked; temporal: only the fleet).
	Given bool
	// Fleet builds the Temporal engine (nil: none in this build); it
	// reports configured false when no temporal.address is set.
	Fleet func(ctx context.Context) (eng engine.Engine, closeFn func(), configured bool, err error)
}

func (d *Deps) addEngineFlag(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&d.Engines.Name, "engine", root.Local, "where the agents run: local (this machine's pool) or temporal (a fleet of brood workers)")
	_ = cmd.RegisterFlagCompletionFunc("engine", cobra.FixedCompletions([]string{root.Local, root.Temporal}, cobra.ShellCompDirectiveNoFileComp))
}

// runEngine is the engine --engine names (root.EngineFlags decides what a
// name means), and what closes it.
func (d *Deps) runEngine(ctx context.Context) (engine.Engine, func(), error) {
	remote, err := root.EngineFlags{Name: d.Engines.Name}.Remote()
	if err != nil {
		return nil, nil, err
	}
	if !remote {
		e, err := d.Engine(ctx)
		return e, func() {}, err
	}
	if d.Engines.Fleet == nil {
		return nil, nil, errors.New("--engine temporal: this brood has no Temporal engine")
	}
	e, closeFn, configured, err := d.Engines.Fleet(ctx)
	if err == nil && !configured {
		err = root.ErrNoFleet
	}
	return e, closeFn, err
}

// localOnly: --engine local was given, so only this project's local runs
// count (listings ask no fleet and list no kept fleet run).
func (d *Deps) localOnly() bool {
	return d.Engines.Given && d.Engines.Name == root.Local
}

// notLocal is a run's not-found error under --engine local, which asked
// no fleet: it says so, and how to look there too.
func (d *Deps) notLocal(err error, id string) error {
	if !d.localOnly() || !strings.HasPrefix(err.Error(), "no workflow run ") {
		return err
	}
	return fmt.Errorf("no local workflow run %s in this project (--engine local asks no fleet: without it, or with --engine temporal, a fleet run is found)", strings.TrimSpace(id))
}

// givenEngine checks an --engine given on the command line (set says
// whether it was) before a listing honours it.
func (d *Deps) givenEngine(set bool) error {
	d.Engines.Given = set
	_, err := root.EngineFlags{Name: d.Engines.Name}.Remote()
	return err
}

// fleet is the Temporal engine when one is configured (or asked for).
func (d *Deps) fleet(ctx context.Context) (engine.Engine, func(), error) {
	if d.localOnly() {
		return nil, func() {}, nil
	}
	if d.Engines.Fleet == nil {
		return nil, func() {}, nil
	}
	e, closeFn, configured, err := d.Engines.Fleet(ctx)
	if err != nil {
		return nil, func() {}, err
	}
	if !configured {
		return nil, func() {}, nil
	}
	return e, closeFn, nil
}

// fleetConfigured says whether a fleet is configured (reachable or not):
// only then is a kept fleet run shown from this project's copy.
func (d *Deps) fleetConfigured(ctx context.Context) bool {
	fl, closeFn, err := d.fleet(ctx)
	closeFn()
	return fl != nil || err != nil
}

// records is the local engine for reading and marking runs.
func (d *Deps) records(ctx context.Context) (engine.Engine, error) {
	if d.Records != nil {
		return d.Records(), nil
	}
	return d.Engine(ctx)
}

// resolveRun is the whole run id that id names: the id itself, or a unique
// prefix of one in any case (as brood tasks takes task ids), among this
// project's runs and the fleet's. down says the fleet was asked and did
// not answer (already said on stderr).
func (d *Deps) resolveRun(ctx context.Context, id string) (whole string, down bool, err error) {
	if d.Engines.Name != "temporal" {
		local, err := d.records(ctx)
		if err != nil {
			return "", false, err
		}
		if _, err := local.Show(ctx, id); err == nil {
			return id, false, nil
		} else if errors.Is(err, taskdir.ErrNotYours) {
			return "", false, err // a run a repository shipped: said, never run
		}
	}
	runs, down, err := d.listRuns(ctx)
	if err != nil {
		return "", down, err
	}
	ids := make([]string, 0, len(runs))
	for _, r := range runs {
		if !slices.Contains(ids, r.RunID) {
			ids = append(ids, r.RunID)
		}
	}
	whole, err = cmdutil.ResolveID("workflow run", id, ids)
	if err != nil && !strings.Contains(err.Error(), "ambiguous") {
		if d.Engines.Name != "temporal" {
			if other, oerr := cmdutil.ResolveID("workflow run", id, localeng.NotYours(d.projectRoot())); oerr == nil {
				_, err := localeng.New(localeng.Config{ProjectRoot: d.projectRoot()}).Show(ctx, other)
				return "", down, err // not made by you, and why
			}
		}
		return "", down, notFound(engine.ErrNotFound, id)
	}
	return whole, down, err
}

// completeRuns completes a RUN_ID argument with this project's runs,
// newest first (the fleet is not dialled for a completion).
func (d *Deps) completeRuns(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 || d.Records == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	runs, _ := d.Records().List(cmd.Context())
	ids := make([]string, 0, len(runs))
	for _, r := range runs {
		ids = append(ids, r.RunID+"\t"+r.Plan+" "+r.Status)
	}
	return ids, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// engineFor is the engine that knows run id: --engine temporal asks only
// the fleet; otherwise this project's local runs come first, then the
// fleet's, if one is configured. run says the caller will run calls (a
// resume), so a local engine must be able to. id is first made whole
// (resolveRun); the whole id is returned. A fleet that did not answer
// then is not dialled, nor said, again (issue 26 F7).
func (d *Deps) engineFor(ctx context.Context, id string, run bool) (engine.Engine, string, func(), error) {
	id, down, err := d.resolveRun(ctx, id)
	if err != nil {
		return nil, "", nil, err
	}
	eng, closeFn, err := d.engineOf(ctx, id, run, down)
	return eng, id, closeFn, err
}

func (d *Deps) engineForWhole(ctx context.Context, id string, run bool) (engine.Engine, func(), error) {
	return d.engineOf(ctx, id, run, false)
}

// engineOf is engineForWhole's; down: the fleet did not answer just now,
// so only this project's records are asked.
func (d *Deps) engineOf(ctx context.Context, id string, run, down bool) (engine.Engine, func(), error) {
	if d.Engines.Name == "temporal" {
		return d.runEngine(ctx)
	}
	local, err := d.records(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := local.Show(ctx, id); !errors.Is(err, engine.ErrNotFound) {
		if run {
			local, err = d.Engine(ctx)
		}
		return local, func() {}, err
	}
	var fl engine.Engine
	closeFn, ferr := func() {}, error(nil)
	if !down {
		fl, closeFn, ferr = d.fleet(ctx)
	}
	if ferr != nil || fl == nil {
		if ferr != nil {
			fmt.Fprintf(d.Err, "brood: the fleet was not asked: %v\n", ferr)
		}
		if run {
			local, err = d.Engine(ctx)
		}
		return local, func() {}, err
	}
	if _, err := fl.Show(ctx, id); err == nil {
		return fl, closeFn, nil
	}
	closeFn()
	if run {
		local, err = d.Engine(ctx)
	}
	return local, func() {}, err
}

// allRuns is the local runs and the fleet's (when configured), newest
// first; a fleet that does not answer is said on stderr, not fatal.
func (d *Deps) allRuns(ctx context.Context) ([]engine.RunInfo, error) {
	runs, _, err := d.listRuns(ctx)
	return runs, err
}

// listRuns is allRuns'; down says the fleet did not answer.
func (d *Deps) listRuns(ctx context.Context) (runs []engine.RunInfo, down bool, err error) {
	if d.Engines.Name != "temporal" {
		local, err := d.records(ctx)
		if err != nil {
			return nil, false, err
		}
		if runs, err = local.List(ctx); err != nil {
			return nil, false, err
		}
	}
	var fl engine.Engine
	closeFn := func() {}
	if d.Engines.Name == "temporal" {
		fl, closeFn, err = d.runEngine(ctx)
		if err != nil {
			return nil, false, err
		}
	} else if fl, closeFn, err = d.fleet(ctx); err != nil {
		fmt.Fprintf(d.Err, "brood: fleet runs not listed: %v\n", err)
		down = true
	}
	defer closeFn()
	if fl != nil {
		more, err := fl.List(ctx)
		if err != nil {
			fmt.Fprintf(d.Err, "brood: fleet runs not listed: %v\n", err)
			down = true
		}
		runs = append(runs, more...)
	}
	for _, k := range keptFleetRuns(d.projectRoot()) {
		if fl == nil && !down {
			break // no fleet configured (or --engine local): no fleet run is listed
		}
		// A fleet run this project keeps the result of, which the fleet
		// did not list (unreachable, or it no longer has it): listed from
		// the kept copy, never "no runs" (fleetqa3 P2-3).
		if !slices.ContainsFunc(runs, func(r engine.RunInfo) bool { return r.RunID == k.RunID }) {
			runs = append(runs, k)
		}
	}
	slices.SortFunc(runs, func(a, b engine.RunInfo) int { return strings.Compare(b.RunID, a.RunID) })
	return runs, down, nil
}
