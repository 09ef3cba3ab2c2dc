package fleetlink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/root"
	"github.com/broodhq/brood/internal/spawn"
)

// codeSite runs calls that carry the submitter's tree in a fresh copy per
// call, from a clone cache under the user's cache directory: an overlay over
// a cached checkout of the base where this machine lets a child mount one,
// a full checkout otherwise. What a killed worker left behind, and base
// checkouts no call has used for an hour, are pruned at start and every
// ten minutes. noOverlay (isolation.force_worktree) makes every copy a full
// one, as a machine without overlays does.
func codeSite(ctx context.Context, store temporal.Store, d *spawn.Dispatcher, readOnly func(string) bool, remotes []string, noOverlay bool, stderr io.Writer) (*temporal.CodeSite, error) {
	blobs, ok := store.(*blobstore.Store)
	if !ok {
		return nil, nil
	}
	cache := &codesnap.Cache{Dir: codesnap.DefaultCacheDir(), Remotes: remotes}
	if err := os.MkdirAll(cache.Dir, 0o700); err != nil {
		return nil, err
	}
	sup := isolate.ProbeIn(ctx, cache.Dir)
	cache.Overlay, cache.UserXattr = sup.Overlay, sup.UserXattr
	switch {
	case !sup.Overlay:
		fmt.Fprintf(stderr, "brood worker: no overlay on this machine (%s): each call gets a full copy of the submitter's tree\n", sup.Why)
	case noOverlay:
		cache.Overlay, cache.UserXattr = false, false
		fmt.Fprintf(stderr, "brood worker: isolation.force_worktree is set: each call gets a full copy of the submitter's tree\n")
	}
	migrated, err := cache.MigrateClones(ctx)
	for _, line := range migrated {
		fmt.Fprintf(stderr, "brood worker: %s\n", line)
	}
	if err != nil {
		return nil, err
	}
	if err := cache.Prune(ctx); err != nil {
		return nil, err
	}
	go func() {
		t := time.NewTicker(10 * time.Minute)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = cache.Prune(ctx)
			}
		}
	}()
	return &temporal.CodeSite{Cache: cache, Blobs: blobs, RunnerIn: func(co *codesnap.Checkout) (call.Runner, error) {
		in := func() (*spawn.Dispatcher, error) { return d.In(co.Dir, co.Root, co.Mount) }
		if co.Shared() {
			// (The cache's checkout itself: never a writer's copy.)
			in = func() (*spawn.Dispatcher, error) { return d.ReadOnlyIn(co.Dir) }
		}
		c, err := in()
		if err != nil {
			return nil, err
		}
		return c, nil
	}, ReadOnly: readOnly}, nil
}

// workerRemotes is the worker's allowlist of remotes: its settings' and
// its flags', each checked (codesnap.CheckRemote).
func workerRemotes(fromSettings, fromFlags []string) ([]string, error) {
	var out []string
	for _, src := range []struct {
		name string
		list []string
	}{{"worker.remotes", fromSettings}, {"--remote", fromFlags}} {
		for _, r := range src.list {
			if err := codesnap.CheckRemote(r); err != nil {
				return nil, fmt.Errorf("%s: %w", src.name, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// Worker runs brood worker: it polls the task queue until ctx ends.
func (Link) Worker(ctx context.Context, opts *cmdutil.WorkerOptions) error {
	f := opts.Factory
	conc := opts.Concurrency
	if conc < 0 {
		return &cmdutil.ExitError{Code: 2, Err: errors.New("--concurrency must be positive")}
	}
	if conc == 0 {
		conc = f.Settings.Pool.Concurrency
	}
	// The worker's pool holds as many children as it takes calls.
	f.Settings.Pool.Concurrency = conc
	cfg := Resolve(f, opts.Fleet)
	remotes, err := workerRemotes(f.Settings.Worker.Remotes, opts.Remotes)
	if err != nil {
		return &cmdutil.ExitError{Code: 2, Err: err}
	}
	trust, err := workerTrust(f.Home, opts.TrustedKeys, opts.AllowUnsigned)
	if err != nil {
		return &cmdutil.ExitError{Code: 2, Err: err}
	}
	keys, made, err := workerKeys(f.Home, opts.TrustedWorkerKeys)
	if err != nil {
		return &cmdutil.ExitError{Code: 2, Err: err}
	}
	if err := f.WorkerModel(); err != nil {
		return err // before the fleet is dialled: it would take no call
	}
	held, err := lockRecords(f.ProjectRoot)
	if err != nil {
		return err
	}
	defer held.Close()
	host, _ := os.Hostname()
	identity := fmt.Sprintf("brood-worker:%s:%d", host, os.Getpid())
	cfg.Client.Identity = identity
	store, err := temporal.OpenStore(ctx, cfg.Store)
	if err != nil {
		return err
	}
	cfg.Client.ClaimStore, _ = store.(*blobstore.Store)
	c, err := temporal.Dial(ctx, cfg.Client)
	if err != nil {
		return err
	}
	defer c.Close()
	// The calls' hooks are their submitters' business, not this host's.
	// Nor is what the worker opened for itself its children's to read.
	r, err := root.New(ctx, f, root.Options{NeedModel: true, Unobserved: true, Hidden: workerHidden(cfg.Store, opts.TrustedKeys)})
	if err != nil {
		return err
	}
	defer r.Close()
	d, err := r.MustDispatch("run agent calls")
	if err != nil {
		return err
	}
	reg := f.Registry()
	readOnly := func(agent string) bool {
		def, ok := reg.Get(agent)
		return ok && def.ReadOnly
	}
	site, err := codeSite(ctx, store, d, readOnly, remotes, f.Settings.Isolation.ForceWorktree, f.Err)
	if err != nil {
		return err
	}
	ping := f.Settings.Pool.PingInterval.Duration
	w := temporal.NewWorker(c, temporal.WorkerOptions{
		Queue: cfg.Queue, Concurrency: conc, Heartbeat: ping,
		StopTimeout: 2*f.Settings.Pool.KillGrace.Duration + 5*time.Second,
		Activities: &temporal.Activities{Runner: d, ProjectRoot: f.ProjectRoot, Store: store,
			Worker: identity, UploadEvery: ping, Code: site, Trust: trust, Keys: keys,
			BeforeResult: holdForTest(os.Getenv("BROOD_TEST_HOLD_BEFORE_RESULT"))},
	})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start the worker: %w", err)
	}
	fmt.Fprintf(f.Err, "brood worker: task queue %s on %s (namespace %s), %d calls at once, store %s; Ctrl-C stops\n",
		cfg.Queue, cfg.Client.HostPort, cfg.Client.Namespace, conc, cfg.Store)
	if trust.AllowUnsigned {
		fmt.Fprintln(f.Err, "brood worker: --allow-unsigned: runs any submission from anyone who can reach the task queue")
	} else {
		fmt.Fprintf(f.Err, "brood worker: runs submissions signed by %d trusted key(s)\n", trust.Len())
	}
	if made {
		fmt.Fprintf(f.Err, "brood worker: made this worker's key %s\n", filepath.Join(temporal.KeyDir(f.Home), temporal.WorkerKeyFile))
	}
	fmt.Fprintf(f.Err, "brood worker: worker key %s (continues calls signed by it and %d other worker key(s); the others trust it with --trusted-worker-key)\n", keys.Public(""), keys.Trusted())
	fmt.Fprintf(f.Err, "brood worker: submitters take its results after: brood fleet trust-worker '%s'\n", keys.Public(""))
	if len(remotes) == 0 {
		fmt.Fprintln(f.Err, "brood worker: base commits come from bundles in the store only (no remote allowed: worker.remotes, --remote)")
	}
	<-ctx.Done()
	fmt.Fprintln(f.Err, "brood worker: stopping (running calls move to another worker)")
	w.Stop()
	return nil
}

// workerTrust is the worker's allowlist of submitter keys: its user's
// trusted_keys file and --trusted-key. With none (and no
// --allow-unsigned) the worker does not start: it would refuse every call.
func workerTrust(home string, flags []string, allowUnsigned bool) (*temporal.Trust, error) {
	t := temporal.NewTrust()
	t.AllowUnsigned = allowUnsigned
	if home != "" {
		if err := t.AddFile(filepath.Join(temporal.KeyDir(home), temporal.TrustedKeysFile)); err != nil {
			return nil, err
		}
	}
	for _, k := range flags {
		if err := t.Add(k, "--trusted-key"); err != nil {
			return nil, err
		}
	}
	if t.Len() == 0 && !allowUnsigned {
		return nil, fmt.Errorf("this worker trusts no submitter key, so it would run nothing: add each submitter's public key (brood fleet keygen prints it) with --trusted-key KEY_OR_FILE or a line in %s; --allow-unsigned runs anyone's submissions (a dev server only you can reach)",
			filepath.Join("~/.config/brood/fleet", temporal.TrustedKeysFile))
	}
	return t, nil
}

// workerKeys are the worker's own key (made under its user's fleet
// state at its first start) and the other workers' keys it trusts: its
// user's trusted_workers file and --trusted-worker-key.
func workerKeys(home string, flags []string) (*temporal.WorkerKeys, bool, error) {
	if home == "" {
		return nil, false, errors.New("HOME is not set: brood worker keeps its worker key in ~/.config/brood/fleet")
	}
	dir := temporal.KeyDir(home)
	host, _ := os.Hostname()
	own, made, err := temporal.LoadWorkerKey(dir, "worker@"+host)
	if err != nil {
		return nil, false, err
	}
	trusted, err := temporal.TrustWorkers(dir, flags)
	if err != nil {
		return nil, false, err
	}
	return temporal.NewWorkerKeys(own, trusted), made, nil
}

// holdForTest is the fault tests' way to stop a worker between a call's
// end and its recorded result: with fifo set, that moment waits until the
// test, which opened the fifo to write (and so knows the worker is there),
// closes it. Unset (every real worker): nil, nothing waits.
func holdForTest(fifo string) func(context.Context) {
	if fifo == "" {
		return nil
	}
	return func(context.Context) {
		if f, err := os.Open(fifo); err == nil {
			_, _ = io.Copy(io.Discard, f)
			f.Close()
		}
	}
}
