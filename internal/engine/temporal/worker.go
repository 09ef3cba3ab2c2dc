package temporal

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/blobstore"
)

// ClientOptions say how to reach Temporal.
type ClientOptions struct {
	// HostPort is the frontend (127.0.0.1:7233).
	HostPort  string
	Namespace string
	// TLS turns TLS on (implied by a CA, a client certificate or an API
	// key); CAFile trusts a private CA; CertFile and KeyFile are a client
	// certificate (mTLS); ServerName overrides the name checked.
	TLS        bool
	CAFile     string
	CertFile   string
	KeyFile    string
	ServerName string
	// APIKey authenticates to a hosted Temporal.
	APIKey string
	// Identity names this process in Temporal (default host:pid).
	Identity string
	// DataConverter encodes payloads (a claim check for large ones);
	// nil: the SDK's default.
	DataConverter converter.DataConverter
	// Log receives the SDK's warnings (nil: discarded).
	Log io.Writer
	// ClaimStore, when set, holds every payload over the claim check's
	// threshold (256 KiB): results and inputs of any size travel through
	// the history as references (claimcheck.go). Workers and submitters
	// must use the same store.
	ClaimStore *blobstore.Store
}

// Dial connects to Temporal, or says in one line what to fix.
func Dial(ctx context.Context, o ClientOptions) (client.Client, error) {
	if o.HostPort == "" {
		return nil, fmt.Errorf("no Temporal address: pass --temporal HOST:PORT or set temporal.address")
	}
	opts := client.Options{HostPort: o.HostPort, Namespace: o.Namespace, Identity: o.Identity, DataConverter: o.DataConverter}
	opts.ConnectionOptions.GrpcCompression = Compression(o.HostPort)
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	w := o.Log
	if w == nil {
		w = io.Discard
	}
	opts.Logger = tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if o.TLS || o.CAFile != "" || o.CertFile != "" || o.APIKey != "" {
		cfg, err := tlsConfig(o)
		if err != nil {
			return nil, err
		}
		opts.ConnectionOptions.TLS = cfg
	}
	if o.ClaimStore != nil {
		opts.ExternalStorage = ExternalStorage(o.ClaimStore, 0)
	}
	if o.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(o.APIKey)
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := client.DialContext(dctx, opts)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s (namespace %s): %v; start one with `temporal server start-dev` or check temporal.address", o.HostPort, opts.Namespace, err)
	}
	if err := namespaceThere(dctx, c, o.HostPort, opts.Namespace); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// namespaceThere says in one line what to do when the server has no such
// namespace (every later call would fail with the SDK's bare "Namespace X
// is not found"). Any other answer lets the dial stand: a key scoped to
// its namespace may not be allowed to describe it.
func namespaceThere(ctx context.Context, c client.Client, hostPort, ns string) error {
	_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: ns})
	var nf *serviceerror.NamespaceNotFound
	var nf2 *serviceerror.NotFound
	if errors.As(err, &nf) || errors.As(err, &nf2) {
		return fmt.Errorf("Temporal at %s has no namespace %q: check --namespace or temporal.namespace, or create it with `temporal operator namespace create --namespace %s --address %s`", hostPort, ns, ns, hostPort)
	}
	return nil
}

// Compression is how a client's requests to the frontend at hostPort
// travel: uncompressed to one on this host's loopback (a dev server
// beside its workers), gzip (the SDK's default) to any other. On
// loopback gzip only costs CPU, the client's to compress and the
// server's to inflate, and grpc-go's costs most for the small messages a
// fleet sends (polls, heartbeats, completions: each one resets a
// compressor of some 600 KB): 6 % of the workers' CPU in the 300-call
// benchmark (docs/performance.md, issue 26).
func Compression(hostPort string) client.GrpcCompression {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		host = hostPort
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return &client.GrpcCompressionNone{}
	}
	return &client.GrpcCompressionGzip{}
}

func tlsConfig(o ClientOptions) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("temporal.tls_ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("temporal.tls_ca %s: no PEM certificate in it", o.CAFile)
		}
		cfg.RootCAs = pool
	}
	if o.CertFile != "" || o.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("temporal.tls_cert / tls_key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// WorkerOptions configure a worker.
type WorkerOptions struct {
	Queue string
	// Concurrency is how many calls this worker runs at once: its
	// activity slots (and its pool's limit).
	Concurrency int
	Activities  *Activities
	// Heartbeat is how often heartbeats reach the server at most: the
	// child's ping interval, so a cancel reaches a child within about one.
	Heartbeat time.Duration
	// StopTimeout is how long a stopping worker lets its calls wind down.
	StopTimeout time.Duration
	// Eager lets a plan's worker start a call it schedules itself where
	// it has a slot free (the server's system.enableActivityEagerExecution
	// too), skipping the server's matching and so its priority order: for
	// measurement only (BROOD_BENCH_EAGER).
	Eager bool
}

// NewWorker is a worker that runs plans and their calls.
func NewWorker(c client.Client, o WorkerOptions) worker.Worker {
	if o.Queue == "" {
		o.Queue = DefaultTaskQueue
	}
	wo := worker.Options{
		MaxConcurrentActivityExecutionSize: o.Concurrency,
		DefaultHeartbeatThrottleInterval:   o.Heartbeat,
		MaxHeartbeatThrottleInterval:       o.Heartbeat,
		WorkerStopTimeout:                  o.StopTimeout,
		// An eagerly started activity skips the server's matching, and so
		// its priority order: every call goes through the queue.
		DisableEagerActivities: !o.Eager,
	}
	if o.Activities.Client == nil {
		o.Activities.Client = c
	}
	if o.Activities.Heartbeat == 0 {
		o.Activities.Heartbeat = o.Heartbeat
	}
	w := worker.New(c, o.Queue, wo)
	w.RegisterWorkflowWithOptions(PlanWorkflow, workflow.RegisterOptions{Name: PlanWorkflowName})
	w.RegisterWorkflowWithOptions(CallWorkflow, workflow.RegisterOptions{Name: CallWorkflowName})
	w.RegisterActivityWithOptions(o.Activities.Call, activity.RegisterOptions{Name: CallActivityName})
	w.RegisterActivityWithOptions(o.Activities.Chain, activity.RegisterOptions{Name: ChainActivityName})
	return w
}
