package fleet

import (
	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// KeygenOptions are the flags of `brood fleet keygen`.
type KeygenOptions = cmdutil.KeygenOptions

// NewCmdKeygen builds `brood fleet keygen`. runF replaces the run.
func NewCmdKeygen(f *cmdutil.Factory, runF func(*KeygenOptions) error) *cobra.Command {
	opts := &KeygenOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Make the ed25519 key your fleet submissions are signed with",
		Long: `Make an ed25519 key pair in ~/.config/brood/fleet: submitter.key (the
private key, mode 0600) and submitter.pub. From then on every submission to
the fleet from this account (brood workflow run --engine temporal, brood
subagent --engine temporal, their resumes) is signed with it: the brief, the
agent, the snapshot of your tree, the remote it names and the limits.

A worker runs only submissions signed by a key in its allowlist: give the
public key to the workers' operator, who adds it with
brood worker --trusted-key 'brood-ed25519 ...' or as a line in the worker's
~/.config/brood/fleet/trusted_keys.

With --worker it makes a worker's own key instead (worker.key, worker.pub),
which signs the transcripts and partial changes the worker hands to the
next attempt of a call; brood worker makes one at its first start when
there is none. The fleet's other workers trust its public key with
brood worker --trusted-worker-key or a line in their
~/.config/brood/fleet/trusted_workers (a retry on a worker that does not
trust it starts the call over).`,
		Example: `  brood fleet keygen
  brood fleet keygen --comment "alice laptop"
  brood worker --trusted-key ~/keys/alice.pub --temporal 127.0.0.1:7233
  brood fleet keygen --worker`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			link, err := f.FleetLink()
			if err != nil {
				return err
			}
			return link.Keygen(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing key (workers that trust the old one will refuse your submissions)")
	cmd.Flags().BoolVar(&opts.Worker, "worker", false, "make this machine's worker key (worker.key) instead of the submitter's")
	cmd.Flags().StringVar(&opts.Comment, "comment", "", "a comment at the end of the public key's line (default user@host)")
	return cmd
}
