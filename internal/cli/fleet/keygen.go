package fleet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// KeygenOptions are the flags of `brood fleet keygen`.
type KeygenOptions struct {
	Factory *cmdutil.Factory
	// Force replaces an existing key.
	Force bool
	// Comment ends the public key's line (default user@host).
	Comment string
}

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
~/.config/brood/fleet/trusted_keys.`,
		Example: `  brood fleet keygen
  brood fleet keygen --comment "alice laptop"
  brood worker --trusted-key ~/keys/alice.pub --temporal 127.0.0.1:7233`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return keygenRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing key (workers that trust the old one will refuse your submissions)")
	cmd.Flags().StringVar(&opts.Comment, "comment", "", "a comment at the end of the public key's line (default user@host)")
	return cmd
}

func keygenRun(opts *KeygenOptions) error {
	f := opts.Factory
	if f.Home == "" {
		return errors.New("HOME is not set: brood keeps the fleet key in ~/.config/brood/fleet")
	}
	comment := opts.Comment
	if comment == "" {
		host, _ := os.Hostname()
		comment = cmdutil.FirstNonEmpty(os.Getenv("USER"), "brood") + "@" + host
	}
	dir := temporal.KeyDir(f.Home)
	line, err := temporal.GenerateKey(dir, comment, opts.Force)
	if err != nil {
		return err
	}
	fmt.Fprintf(f.Out, "%s\n", line)
	fmt.Fprintf(f.Err, "brood fleet keygen: private key %s (0600), public key %s\n", filepath.Join(dir, temporal.PrivateKeyFile), filepath.Join(dir, temporal.PublicKeyFile))
	fmt.Fprintf(f.Err, "brood fleet keygen: your fleet submissions are signed with it from now on; on each worker: brood worker --trusted-key '%s' (or that line in ~/.config/brood/fleet/%s)\n", line, temporal.TrustedKeysFile)
	return nil
}
