package root

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/local"
)

// Engine names.
const (
	Local    = "local"
	Temporal = "temporal"
)

// EngineFlags are --engine and where the fleet is: what every command that
// can run agent calls elsewhere than this process's pool takes.
type EngineFlags struct {
	// Name is local (this process's pool; "" too) or temporal.
	Name  string
	Fleet FleetFlags
}

// AddEngineFlag adds --engine to cmd (its verbs too when persistent);
// what names the engine's work (agents, the subagent) ends its help.
func (fl *EngineFlags) AddEngineFlag(cmd *cobra.Command, persistent bool, what string) {
	fs := cmd.Flags()
	if persistent {
		fs = cmd.PersistentFlags()
	}
	fs.StringVar(&fl.Name, "engine", Local, "where "+what+" run: local (this machine's pool) or temporal (a fleet of brood workers)")
	_ = cmd.RegisterFlagCompletionFunc("engine", cobra.FixedCompletions([]string{Local, Temporal}, cobra.ShellCompDirectiveNoFileComp))
}

// Remote reports whether the flags send the calls to the fleet; an
// unknown name is a usage error.
func (fl EngineFlags) Remote() (bool, error) {
	switch fl.Name {
	case "", Local:
		return false, nil
	case Temporal:
		return true, nil
	}
	return false, cmdutil.ExitCode(cmdutil.ExitUsage, fmt.Errorf("--engine %q: use local or temporal", fl.Name))
}

// ErrNoFleet is --engine temporal without a fleet address.
var ErrNoFleet = errors.New("--engine temporal needs the fleet's address: pass --temporal HOST:PORT or set temporal.address")

// Engine is the engine fl names, and what closes it: the local engine over
// r's dispatcher (its children count against this process's depth cap),
// or the Temporal fleet.
func (r *Root) Engine(ctx context.Context, fl EngineFlags) (engine.Engine, func(), error) {
	remote, err := fl.Remote()
	if err != nil {
		return nil, nil, err
	}
	if remote {
		return OpenFleet(ctx, r.f, fl.Fleet)
	}
	d, err := r.MustDispatch("run agent calls")
	if err != nil {
		return nil, nil, err
	}
	return local.New(local.Config{ProjectRoot: r.f.ProjectRoot, Runner: d, Concurrency: r.f.Settings.Pool.Concurrency, Redact: r.Redact}), func() {}, nil
}

// Records is the local engine for reading and marking this project's runs
// (list, show, cancel): it needs no model and no dispatcher.
func Records(f *cmdutil.Factory) engine.Engine {
	return local.New(local.Config{ProjectRoot: f.ProjectRoot})
}
