// Package fleetlink is the Temporal fleet as the command line uses it
// (cmdutil.Fleet): the engine a submitter opens, the fleet's calls in
// brood tasks, brood worker and brood fleet keygen. Only brood-fleet (and
// the tests that stand in for it) link it: it brings go.temporal.io and
// the S3 store (the AWS SDK), whose package initialisers brood does not pay
// for (docs/architecture.md).
package fleetlink

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/taskdir"
)

// Link is the fleet brood-fleet links (cmdutil.Links.Fleet).
type Link struct{}

var _ cmdutil.Fleet = Link{}

// Engine is Open as an engine.Engine.
func (Link) Engine(ctx context.Context, f *cmdutil.Factory, fl cmdutil.FleetFlags) (any, func(), error) {
	e, closeFn, err := Open(ctx, f, fl)
	if err != nil {
		return nil, nil, err
	}
	var eng engine.Engine = e
	return eng, closeFn, nil
}

// FleetConfig is where the fleet is, flags over settings.
type FleetConfig struct {
	Client temporal.ClientOptions
	Queue  string
	Store  string
}

// Resolve is the fleet from flags over settings. Without a store setting
// it is a directory under the user's cache: shared by the workers of one
// machine (set temporal.store to a path every host reaches for more).
func Resolve(f *cmdutil.Factory, fl cmdutil.FleetFlags) FleetConfig {
	t := f.Settings.Temporal
	keyEnv := cmdutil.FirstNonEmpty(t.APIKeyEnv, "TEMPORAL_API_KEY")
	c := temporal.ClientOptions{
		HostPort:  cmdutil.FirstNonEmpty(fl.Address, t.Address),
		Namespace: cmdutil.FirstNonEmpty(fl.Namespace, t.Namespace, temporal.DefaultNamespace),
		TLS:       t.TLS, CAFile: t.TLSCA, CertFile: t.TLSCert, KeyFile: t.TLSKey, ServerName: t.TLSServerName,
		APIKey: f.Getenv(keyEnv), Log: f.Err,
	}
	store := cmdutil.FirstNonEmpty(fl.Store, f.Settings.Store)
	if store == "" && f.Home != "" {
		store = "file://" + filepath.Join(f.Home, ".cache", "brood", "fleet-store")
	}
	return FleetConfig{Client: c, Queue: cmdutil.FirstNonEmpty(fl.Queue, t.TaskQueue, temporal.DefaultTaskQueue), Store: store}
}

// Open is the Temporal engine this process submits to (--engine
// temporal), with its limits from this project's settings and registry;
// close releases its connection.
func Open(ctx context.Context, f *cmdutil.Factory, fl cmdutil.FleetFlags) (*temporal.Engine, func(), error) {
	cfg := Resolve(f, fl)
	// The same store as the workers': large results come back through it,
	// and so do the snapshot of this tree and the workers' patches.
	store, err := temporal.OpenStore(ctx, cfg.Store)
	if err != nil {
		return nil, nil, err
	}
	cfg.Client.ClaimStore, _ = store.(*blobstore.Store)
	c, err := temporal.Dial(ctx, cfg.Client)
	if err != nil {
		return nil, nil, err
	}
	var signer *temporal.Signer
	workers := temporal.NewResultTrust(nil, "")
	if f.Home != "" {
		if signer, err = temporal.LoadSigner(filepath.Join(temporal.KeyDir(f.Home), temporal.PrivateKeyFile)); err != nil {
			c.Close()
			return nil, nil, err
		}
		// The results this submitter takes: signed by its user's own
		// worker key or one in its user's trusted_workers, never a
		// project's (resultsig.go).
		if workers, err = temporal.SubmitterWorkerTrust(temporal.KeyDir(f.Home)); err != nil {
			c.Close()
			return nil, nil, err
		}
	}
	reg := f.Registry()
	s := f.Settings
	limits := func(agent string) temporal.CallLimits {
		l := temporal.CallLimits{
			Heartbeat: s.Pool.HeartbeatTimeout.Duration, Timeout: s.Pool.TimeoutFor(agent),
			KillGrace: s.Pool.KillGrace.Duration, Attempts: s.Temporal.Attempts,
		}
		if def, ok := reg.Get(agent); ok {
			// An untrusted project agent's timeout: only a lower one
			// (as the local spawner takes it).
			untrusted := def.Source == registry.SourceProject && !f.TrustsProjectFile(def.Path)
			if def.Timeout > 0 && (!untrusted || l.Timeout <= 0 || def.Timeout < l.Timeout) {
				l.Timeout = def.Timeout
			}
			l.Priority = temporal.PriorityKey(spawn.PriorityOf(def))
		}
		return l
	}
	e := temporal.New(temporal.Config{Client: c, Namespace: cfg.Client.Namespace, Queue: cfg.Queue, Limits: limits, Poll: 250 * time.Millisecond,
		Code: codeConfig(ctx, f, cfg.Client.ClaimStore), ProjectRoot: f.ProjectRoot, Signer: signer, Store: store, Workers: workers,
		ClaimStore: cfg.Client.ClaimStore})
	return e, c.Close, nil
}

// codeConfig ships this directory's tree (HEAD plus its dirty state) to the
// workers and applies their changes back, when it is in a git work tree;
// elsewhere the workers run in their own checkouts.
func codeConfig(ctx context.Context, f *cmdutil.Factory, blobs *blobstore.Store) *temporal.CodeConfig {
	if blobs == nil {
		return nil
	}
	if out, err := gitx.In(f.Cwd).Line(ctx, "rev-parse", "--is-inside-work-tree"); err != nil || out != "true" {
		return nil
	}
	// A patch that does not land is kept under .brood/, beside the
	// project's other records, never in a temporary directory.
	state := ""
	if f.ProjectRoot != "" {
		state = filepath.Join(taskdir.Open(f.ProjectRoot).StateDir(), "fleet", "patches")
	}
	// A worker's change is judged by this user's own Edit and Write deny
	// rules (the settings': on the fleet the permission flags are the
	// worker's), as a local isolated writer's is when it lands.
	denied := isolate.WriteDeniedFunc(&dispatch.Envelope{Permissions: f.Permissions(cmdutil.PermissionFlags{}), Workspace: f.Cwd})
	// And by the agent's own definition's deny rules (disallowedTools
	// with a specifier), as this user's registry has the agent, as a
	// local writer's envelope carries them (review42 P3-A).
	reg := sync.OnceValue(f.Registry) // loaded at the first landing, once
	agentDeny := func(agent string) []string {
		if def, ok := reg().Get(agent); ok {
			return def.DenyRules
		}
		return nil
	}
	return &temporal.CodeConfig{Blobs: blobs, Dir: f.Cwd, StateDir: state, AllowConfig: f.Settings.Agents.AllowConfigChanges, WriteDenied: denied, AgentDeny: agentDeny}
}
