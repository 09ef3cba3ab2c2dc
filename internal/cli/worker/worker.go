// Package worker is `brood worker`: a Temporal worker that runs the agent
// calls of plans (and of `brood subagent --engine temporal`) submitted to
// its task queue, each as a real brood child process of this worker under
// its own pool, lifeguard and depth cap. The command is brood's (its flags
// and help); what it runs is linked in brood-fleet (root/fleetlink), to
// which brood hands it (cmdutil.HandOffFleet).
package worker

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// Options are the flags of `brood worker`.
type Options = cmdutil.WorkerOptions

// NewCmdWorker builds `brood worker`. runF replaces the run.
func NewCmdWorker(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run agent calls from a Temporal task queue (the fleet engine's worker)",
		Long: `Poll a Temporal task queue and run the plans and agent calls submitted to it
(brood workflow run --engine temporal, brood subagent --engine temporal), each
call as a real brood child process of this worker, under this worker's pool,
lifeguard and depth cap. Each call runs in a fresh copy of the submitter's
tree (shipped through the store), never in this directory's checkout; the
model and settings are this worker's (BROOD_MODEL, .brood/settings.toml).

A call whose worker dies is retried on another worker of the queue and
continues its transcript from the fleet's store (store, --store): every
worker and the submitter must reach the same store. Ctrl-C stops the worker;
its running calls move to another worker.

A worker runs only the submissions signed by a key it trusts (--trusted-key,
~/.config/brood/fleet/trusted_keys; brood fleet keygen makes a submitter's
key), or every one with --allow-unsigned (a dev server only you can reach);
with neither it refuses to start.`,
		Example: `  temporal server start-dev --headless --db-filename /tmp/temporal.db
  brood fleet keygen   # on a submitter's machine: its key, ~/.config/brood/fleet/submitter.pub
  brood worker --temporal 127.0.0.1:7233 --concurrency 4 --trusted-key ~/.config/brood/fleet/submitter.pub
  brood worker --temporal temporal.example.com:7233 --namespace team --task-queue review --trusted-key ~/team.keys`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{cmdutil.FleetAnnotation: cmdutil.FleetAlways},
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			link, err := f.FleetLink()
			if err != nil {
				return err
			}
			return link.Worker(cmd.Context(), opts)
		},
	}
	opts.Fleet.AddFlags(cmd)
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", 0, "calls this worker runs at once (default: pool.concurrency)")
	cmd.Flags().StringArrayVar(&opts.TrustedKeys, "trusted-key", nil, "a submitter's public key (brood-ed25519 ..., as brood fleet keygen prints it) or a file of them, whose signed submissions this worker runs (repeatable; added to ~/.config/brood/fleet/trusted_keys)")
	cmd.Flags().StringArrayVar(&opts.TrustedWorkerKeys, "trusted-worker-key", nil, "another worker's public key (brood-ed25519 ..., as it prints it at start) or a file of them: this worker continues calls from transcripts and partial changes that key signed (repeatable; added to ~/.config/brood/fleet/trusted_workers; a worker always trusts its own key)")
	cmd.Flags().BoolVar(&opts.AllowUnsigned, "allow-unsigned", false, "run every submission, signed or not, from anyone who can reach the task queue (a dev server only you can reach; see docs/scale-out.md)")
	cmd.Flags().StringArrayVar(&opts.Remotes, "remote", nil, "a git remote this worker may fetch a submission's base commit from (repeatable; added to worker.remotes; default: none, bases come from bundles in the store)")
	return cmd
}
