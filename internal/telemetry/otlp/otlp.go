// Package otlp starts brood's OpenTelemetry exporters (OTLP over HTTP or
// gRPC) as the standard environment variables ask (telemetry.FromEnv). It
// is apart from package telemetry so that only a binary that exports links
// the SDK's exporters, gRPC and protobuf: brood-fleet does; brood, which
// hands it agent runs while export is asked (cmdutil.HandOffTelemetry), and
// the lean children do not (gRPC's x/net/trace executes html/template,
// which keeps every exported method of every type in the binary).
package otlp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/broodhq/brood/internal/telemetry"
)

// Setup starts the exporters the environment asks for; it returns nil (off)
// when it asks for none. Shutdown flushes them.
func Setup(ctx context.Context, getenv func(string) string) (*telemetry.Telemetry, error) {
	c, err := telemetry.FromEnv(getenv)
	if err != nil || (!c.Traces && !c.Metrics) {
		return nil, err
	}
	// Every process of a run (the root and each child, which exports its
	// own spans) is its own service instance: service.instance.id tells
	// them apart, process.pid finds the process.
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", c.Service), attribute.String("service.instance.id", instanceID()),
		attribute.Int("process.pid", os.Getpid())))
	if err != nil {
		res = resource.Default()
	}
	var closers []func(context.Context) error
	shutdown := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i](ctx))
		}
		return errors.Join(errs...)
	}
	var tp trace.TracerProvider
	scrub := new(telemetry.Scrub) // the process's redactor, once it is set (Telemetry.SetRedact)
	if c.Traces {
		exp, err := traceExporter(ctx, c.TracesProto)
		if err != nil {
			return nil, fmt.Errorf("OpenTelemetry traces: %w", err)
		}
		p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(scrubExporter{exp, scrub}), sdktrace.WithResource(res))
		closers = append(closers, p.Shutdown)
		tp = p
	}
	var m metric.Meter
	if c.Metrics {
		exp, err := metricExporter(ctx, c.MetricsProto)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("OpenTelemetry metrics: %w", err), shutdown())
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		closers = append(closers, mp.Shutdown)
		m = mp.Meter("github.com/broodhq/brood")
	}
	t, err := telemetry.New(tp, m, closers...)
	return t.UseScrub(scrub), err
}

// instanceID is a random UUID (version 4), new for each process.
func instanceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func traceExporter(ctx context.Context, proto string) (sdktrace.SpanExporter, error) {
	if proto == "grpc" {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}

func metricExporter(ctx context.Context, proto string) (sdkmetric.Exporter, error) {
	if proto == "grpc" {
		return otlpmetricgrpc.New(ctx)
	}
	return otlpmetrichttp.New(ctx)
}
