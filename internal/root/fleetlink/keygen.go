package fleetlink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// Keygen makes the submitter's key pair (brood fleet keygen).
func (Link) Keygen(opts *cmdutil.KeygenOptions) error {
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
	if opts.Worker {
		line, err := temporal.GenerateWorkerKey(dir, comment, opts.Force)
		if err != nil {
			return err
		}
		fmt.Fprintf(f.Out, "%s\n", line)
		fmt.Fprintf(f.Err, "brood fleet keygen: worker key %s (0600), public key %s\n", filepath.Join(dir, temporal.WorkerKeyFile), filepath.Join(dir, temporal.WorkerPublicKeyFile))
		fmt.Fprintf(f.Err, "brood fleet keygen: brood worker signs what it hands on with it; on the fleet's other workers: brood worker --trusted-worker-key '%s' (or that line in ~/.config/brood/fleet/%s)\n", line, temporal.TrustedWorkersFile)
		return nil
	}
	line, err := temporal.GenerateKey(dir, comment, opts.Force)
	if err != nil {
		return err
	}
	fmt.Fprintf(f.Out, "%s\n", line)
	fmt.Fprintf(f.Err, "brood fleet keygen: private key %s (0600), public key %s\n", filepath.Join(dir, temporal.PrivateKeyFile), filepath.Join(dir, temporal.PublicKeyFile))
	fmt.Fprintf(f.Err, "brood fleet keygen: your fleet submissions are signed with it from now on; on each worker: brood worker --trusted-key '%s' (or that line in ~/.config/brood/fleet/%s)\n", line, temporal.TrustedKeysFile)
	return nil
}

// TrustWorker adds worker keys to this account's trusted_workers (brood
// fleet trust-worker): the workers whose results it takes.
func (Link) TrustWorker(opts *cmdutil.TrustWorkerOptions) error {
	f := opts.Factory
	if f.Home == "" {
		return errors.New("HOME is not set: brood keeps the trusted worker keys in ~/.config/brood/fleet")
	}
	dir := temporal.KeyDir(f.Home)
	file := filepath.Join(dir, temporal.TrustedWorkersFile)
	for _, k := range opts.Keys {
		added, err := temporal.TrustWorker(dir, k)
		if err != nil {
			return err
		}
		for _, line := range added {
			pub, _ := temporal.ParsePublicKey(line)
			fmt.Fprintf(f.Out, "%s\n", temporal.Fingerprint(pub))
		}
		if len(added) == 0 {
			fmt.Fprintf(f.Err, "brood fleet trust-worker: %s: trusted already (%s)\n", k, file)
		}
	}
	fmt.Fprintf(f.Err, "brood fleet trust-worker: your fleet calls take the results these workers sign, and your own brood worker continues their calls (%s)\n", file)
	return nil
}
