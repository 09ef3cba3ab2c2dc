package fleet

import (
	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// TrustWorkerOptions are the arguments of `brood fleet trust-worker`.
type TrustWorkerOptions = cmdutil.TrustWorkerOptions

// NewCmdTrustWorker builds `brood fleet trust-worker`. runF replaces the run.
func NewCmdTrustWorker(f *cmdutil.Factory, runF func(*TrustWorkerOptions) error) *cobra.Command {
	opts := &TrustWorkerOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "trust-worker KEY|FILE...",
		Short: "Take the results a fleet worker signs",
		Long: `Add a worker's public key (the brood-ed25519 line brood worker prints when
it starts, or a file of such lines) to ~/.config/brood/fleet/trusted_workers.

Every fleet worker signs the results it returns with its own key. Your
submissions (brood subagent --engine temporal, brood workflow run --engine
temporal) take a result only when a worker key you trust signed it for that
very call: one in trusted_workers, or your own worker key
(~/.config/brood/fleet/worker.key). Any other result is refused: the call
fails, and a change it brought back is not applied but kept under
.brood/fleet/patches/. A project's settings never add a worker key.

The same file lists the workers your own brood worker continues calls of.`,
		Example: `  brood fleet trust-worker 'brood-ed25519 AAAA... worker@build1'
  brood fleet trust-worker ~/keys/team-workers.pub`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Keys = args
			if runF != nil {
				return runF(opts)
			}
			link, err := f.FleetLink()
			if err != nil {
				return err
			}
			return link.TrustWorker(opts)
		},
	}
	return cmd
}
