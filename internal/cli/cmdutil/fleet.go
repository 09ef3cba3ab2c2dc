package cmdutil

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/broodhq/brood/internal/childexe"
)

// Fleet is what brood-fleet links and brood does not: the Temporal fleet
// (its SDK and API, the S3 store and the AWS SDK), whose package initialisers
// would cost every brood start milliseconds (docs/performance.md). brood's
// Links.Fleet is nil: a command that needs the fleet is handed whole to
// brood-fleet before it writes or asks anything (HandOffFleet).
type Fleet interface {
	// Engine is the Temporal engine this process submits to (--engine
	// temporal, the workflow verbs), an engine.Engine (root.OpenFleet: the
	// lean child binaries link cmdutil, and must not link package engine
	// and the workflow runtime behind it); close releases its connection.
	Engine(ctx context.Context, f *Factory, fl FleetFlags) (any, func(), error)
	// ShowCall prints fleet call id (brood tasks show), or returns
	// engine.ErrNotFound when no fleet is configured or it has no such
	// call.
	ShowCall(ctx context.Context, f *Factory, fl FleetFlags, id string, json bool) error
	// Calls are the fleet's calls and runs (brood tasks), newest first.
	Calls(ctx context.Context, f *Factory, fl FleetFlags) ([]FleetCall, error)
	// ResumeCall continues fleet call id with prompt, or with none lands
	// its change in this tree (brood tasks resume).
	ResumeCall(ctx context.Context, f *Factory, fl FleetFlags, id, prompt string, json bool) error
	// Worker runs brood worker until ctx ends.
	Worker(ctx context.Context, opts *WorkerOptions) error
	// Keygen runs brood fleet keygen.
	Keygen(opts *KeygenOptions) error
	// TrustWorker runs brood fleet trust-worker.
	TrustWorker(opts *TrustWorkerOptions) error
}

// TrustWorkerOptions are the arguments of `brood fleet trust-worker`.
type TrustWorkerOptions struct {
	Factory *Factory
	// Keys are worker public keys, or files of them.
	Keys []string
}

// FleetCall is one of the fleet's calls or plan runs, as brood tasks lists it.
type FleetCall struct {
	ID          string
	Kind        string // call | plan
	Agent       string
	Status      string
	Description string
	Created     time.Time
	// Unchecked: Status is what the workflow reported on Temporal
	// (whoever completed its workflow tasks wrote it), unchecked.
	Unchecked bool
}

// WorkerOptions are the flags of `brood worker`.
type WorkerOptions struct {
	Factory *Factory
	Fleet   FleetFlags
	// Concurrency is how many calls run here at once (default: the pool's
	// concurrency).
	Concurrency int
	// Remotes are git remotes this worker may fetch a base commit from,
	// added to worker.remotes (--remote).
	Remotes []string
	// TrustedKeys are submitter public keys (or files of them) whose
	// signed submissions this worker runs, besides
	// ~/.config/brood/fleet/trusted_keys (--trusted-key).
	TrustedKeys []string
	// AllowUnsigned runs any submission, signed or not (--allow-unsigned).
	AllowUnsigned bool
	// TrustedWorkerKeys are other workers' public keys (or files of them)
	// whose signed transcripts and partial changes this worker continues
	// a call from, besides its own and ~/.config/brood/fleet/trusted_workers
	// (--trusted-worker-key).
	TrustedWorkerKeys []string
}

// KeygenOptions are the flags of `brood fleet keygen`.
type KeygenOptions struct {
	Factory *Factory
	// Force replaces an existing key.
	Force bool
	// Comment ends the public key's line (default user@host).
	Comment string
	// Worker makes the worker's key (worker.key) instead of the
	// submitter's (--worker).
	Worker bool
}

// FleetFlags say where the fleet is: each overrides its temporal.* setting.
type FleetFlags struct {
	Address   string
	Namespace string
	Queue     string
	Store     string
}

// AddFlags adds --temporal, --namespace, --task-queue and --store.
func (fl *FleetFlags) AddFlags(cmd *cobra.Command) { fl.addTo(cmd.Flags()) }

// AddPersistentFlags adds them for a command and its verbs.
func (fl *FleetFlags) AddPersistentFlags(cmd *cobra.Command) { fl.addTo(cmd.PersistentFlags()) }

// Configured reports whether a fleet address is given (flag or setting).
func (fl FleetFlags) Configured(f *Factory) bool {
	return fl.Address != "" || f.Settings.Temporal.Address != ""
}

// Where names the fleet a lookup asked: its task queue and frontend.
func (fl FleetFlags) Where(f *Factory) string {
	t := f.Settings.Temporal
	return fmt.Sprintf("task queue %s on %s", FirstNonEmpty(fl.Queue, t.TaskQueue, "brood"), FirstNonEmpty(fl.Address, t.Address))
}

func (fl *FleetFlags) addTo(fs *pflag.FlagSet) {
	fs.StringVar(&fl.Address, "temporal", "", "the Temporal frontend, HOST:PORT (default: temporal.address)")
	fs.StringVar(&fl.Namespace, "namespace", "", "the Temporal namespace (default: temporal.namespace, else default)")
	fs.StringVar(&fl.Queue, "task-queue", "", "the task queue (default: temporal.task_queue, else brood)")
	fs.StringVar(&fl.Store, "store", "", "the store every worker and the submitter reach, file:///path or s3://bucket/prefix (default: store)")
}

// FleetAnnotation is a command's cobra annotation for how it needs the
// fleet, which brood does not link: FleetAlways for brood worker and brood
// fleet (and their verbs); FleetEngineOnly for one whose fleet flags serve
// --engine temporal alone (brood subagent). Otherwise a command with
// --engine needs it when that says temporal, and one with the fleet flags
// (listings, show, resume, the workflow verbs, which read the fleet's
// records beside local ones) when a fleet is configured.
const (
	FleetAnnotation = "brood.fleet"
	FleetAlways     = "always"
	FleetEngineOnly = "engine"
)

// fleetNeeds is how much a command needs the fleet.
type fleetNeeds int

const (
	noFleet           fleetNeeds = iota
	fleetIfConfigured            // it reads a configured fleet's records beside local ones
	fleetSurely
)

// fleetNeed is how much cmd, its flags parsed, needs the fleet.
func fleetNeed(cmd *cobra.Command, f *Factory) fleetNeeds {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[FleetAnnotation] == FleetAlways {
			return fleetSurely
		}
	}
	if fl := cmd.Flags().Lookup("engine"); fl != nil && fl.Value.String() == "temporal" {
		return fleetSurely
	}
	if cmd.Annotations[FleetAnnotation] == FleetEngineOnly {
		return noFleet
	}
	if fl := cmd.Flags().Lookup("temporal"); fl != nil && (fl.Value.String() != "" || f.Settings.Temporal.Address != "") {
		return fleetIfConfigured
	}
	return noFleet
}

// HandOffFleet runs brood-fleet in this process's place (syscall.Exec, the
// same arguments and environment) when this binary does not link the fleet
// and cmd needs it: called once the settings are read, before the command
// writes or asks anything, so nothing is recorded or prompted twice. A
// command that needs the fleet only for a configured fleet's records goes
// on here without brood-fleet (its fleet part says why: FleetLink); one
// that surely needs it fails with one line naming what is missing.
func (f *Factory) HandOffFleet(cmd *cobra.Command) error {
	if f.Links.Fleet != nil {
		return nil
	}
	need := fleetNeed(cmd, f)
	if need == noFleet {
		return nil
	}
	c, err := findFleet()
	if err != nil {
		if need == fleetIfConfigured {
			return nil // the local records still; the fleet's part says why not (FleetLink)
		}
		return ExitCode(ExitFailed, fmt.Errorf("%s %w", cmd.CommandPath(), err))
	}
	// argv[0] as this process was given it: the depth markers a parent
	// may have put there (package depth) stay where they were.
	argv := append([]string{os.Args[0]}, f.Args...)
	if err := syscall.Exec(c, argv, os.Environ()); err != nil {
		return ExitCode(ExitFailed, fmt.Errorf("%s: run %s: %w", cmd.CommandPath(), c, err))
	}
	return nil // not reached
}

// FleetLink is the fleet this binary links, or the error that says why
// there is none (brood without brood-fleet beside it).
func (f *Factory) FleetLink() (Fleet, error) {
	if f.Links.Fleet != nil {
		return f.Links.Fleet, nil
	}
	if _, err := findFleet(); err != nil {
		return nil, fmt.Errorf("the fleet %w", err)
	}
	return nil, fmt.Errorf("the fleet is linked in %s, which runs this command when it is installed beside brood", childexe.NameFleet)
}

// findFleet is brood-fleet beside this binary when it is the same build
// (the rule brood-child is found by: never PATH, the repository or the
// working directory).
func findFleet() (string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe) // as /proc/self/exe already is on Linux
	}
	if err != nil {
		return "", fmt.Errorf("needs %s beside brood: cannot find this binary: %v", childexe.NameFleet, err)
	}
	c := childexe.FindNamed(exe, childexe.NameFleet)
	if !c.Lean {
		return "", fmt.Errorf("needs %s, which links the Temporal fleet: %s; or run %s itself", childexe.NameFleet, c.Why, childexe.NameFleet)
	}
	return c.Path, nil
}
