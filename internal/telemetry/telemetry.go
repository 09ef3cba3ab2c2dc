// Package telemetry exports brood's OpenTelemetry traces and metrics over
// OTLP (HTTP or gRPC), following the GenAI semantic conventions:
// invoke_agent per agent run, chat per model request, execute_tool per tool
// call, invoke_workflow per workflow run. It is off unless the standard
// OTEL_EXPORTER_OTLP_* variables name an endpoint, and then costs nothing:
// no exporter is built, and every method of a nil *Telemetry is a no-op.
//
// A child process continues its parent's trace: the parent's Task call span
// travels in the envelope as a W3C traceparent (TraceParent, WithParent).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/broodhq/brood/internal/price"
)

// Telemetry is one process's tracer and instruments. A nil *Telemetry is
// valid: tracing is off.
type Telemetry struct {
	tracer   trace.Tracer
	tokens   metric.Int64Histogram
	duration metric.Float64Histogram
	cost     metric.Float64Counter // brood.cost.usage
	// Claude Code's metrics (its monitoring docs' names), so that
	// dashboards built for it read brood's numbers too.
	ccTokens   metric.Int64Counter   // claude_code.token.usage
	ccCost     metric.Float64Counter // claude_code.cost.usage
	ccSessions metric.Int64Counter   // claude_code.session.count
	prices     price.Table
	closers    []func(context.Context) error
	scrub      *Scrub // redacts every span before export (scrub.go)
}

// Config decides from the environment whether and how to export.
type Config struct {
	Traces, Metrics bool
	TracesProto     string // grpc | http/protobuf
	MetricsProto    string
	Service         string
}

// FromEnv reads the standard variables: an endpoint (OTEL_EXPORTER_OTLP_
// ENDPOINT, or the per-signal _TRACES_/_METRICS_ENDPOINT) turns a signal
// on; OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none or
// OTEL_METRICS_EXPORTER=none turn it off; OTEL_EXPORTER_OTLP_PROTOCOL (or
// the per-signal one) chooses grpc or http/protobuf (the default).
func FromEnv(getenv func(string) string) (Config, error) {
	var c Config
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return c, nil
	}
	any := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	c.Traces = (any || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "") && !none(getenv("OTEL_TRACES_EXPORTER"))
	c.Metrics = (any || getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != "") && !none(getenv("OTEL_METRICS_EXPORTER"))
	var err error
	if c.TracesProto, err = protocol(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"); err != nil {
		return c, err
	}
	if c.MetricsProto, err = protocol(getenv, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"); err != nil {
		return c, err
	}
	c.Service = getenv("OTEL_SERVICE_NAME")
	if c.Service == "" {
		c.Service = "brood"
	}
	return c, nil
}

func none(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "none") }

func protocol(getenv func(string) string, specific string) (string, error) {
	p := strings.TrimSpace(getenv(specific))
	name := specific
	if p == "" {
		p, name = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	switch p {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("%s=%q: brood exports OTLP as grpc or http/protobuf", name, p)
}

// New is the Telemetry of a tracer provider and a meter (either nil: that
// signal is off), shut down by closers in reverse order: what otlp.Setup
// builds from the environment. It is there, not here, so that a binary
// that exports nothing (brood-child) links neither the SDK's exporters
// nor gRPC and protobuf, whose package initialisers run at every start.
func New(tp trace.TracerProvider, m metric.Meter, closers ...func(context.Context) error) (*Telemetry, error) {
	t := &Telemetry{closers: closers, prices: price.Default()}
	if tp != nil {
		t.tracer = tp.Tracer("github.com/broodhq/brood")
	}
	if m != nil {
		if err := t.instruments(m); err != nil {
			return nil, errors.Join(err, t.Shutdown(context.Background()))
		}
	}
	return t, nil
}

// SetupFunc starts the exporters the environment asks for (otlp.Setup).
type SetupFunc func(ctx context.Context, getenv func(string) string) (*Telemetry, error)

func (t *Telemetry) instruments(m metric.Meter) error {
	var err error
	t.tokens, err = m.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used"),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864))
	if err != nil {
		return err
	}
	t.duration, err = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration"),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
	if err != nil {
		return err
	}
	if t.cost, err = m.Float64Counter("brood.cost.usage", metric.WithUnit("USD"),
		metric.WithDescription("Estimated cost of model requests at list price (brood's price table)")); err != nil {
		return err
	}
	if t.ccTokens, err = m.Int64Counter("claude_code.token.usage", metric.WithUnit("tokens"),
		metric.WithDescription("Number of tokens used")); err != nil {
		return err
	}
	if t.ccCost, err = m.Float64Counter("claude_code.cost.usage", metric.WithUnit("USD"),
		metric.WithDescription("Cost of the Claude Code session")); err != nil {
		return err
	}
	t.ccSessions, err = m.Int64Counter("claude_code.session.count", metric.WithUnit("count"),
		metric.WithDescription("Count of CLI sessions started"))
	return err
}

// SetPrices sets the price table the cost metrics use (price.Default until
// then): the one with the settings' [prices] applied. Call it before the
// first model request.
func (t *Telemetry) SetPrices(p price.Table) {
	if t != nil && p != nil {
		t.prices = p
	}
}

// Shutdown flushes and stops the exporters (bounded by ctx).
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	for i := len(t.closers) - 1; i >= 0; i-- {
		errs = append(errs, t.closers[i](ctx))
	}
	return errors.Join(errs...)
}

type ctxKey struct{}

// NewContext returns ctx carrying t, for code that starts spans without
// being handed a *Telemetry (the workflow engine).
func NewContext(ctx context.Context, t *Telemetry) context.Context {
	if t == nil {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, t)
}

// FromContext is the *Telemetry ctx carries (nil: off).
func FromContext(ctx context.Context) *Telemetry {
	t, _ := ctx.Value(ctxKey{}).(*Telemetry)
	return t
}

// TraceParent is ctx's span context as a W3C traceparent ("" for none).
func TraceParent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// WithParent returns ctx continuing the trace of traceparent (a child
// process under its parent's Task call). A malformed value is ignored.
func WithParent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}
