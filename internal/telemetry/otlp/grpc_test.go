package otlp_test

import (
	"context"
	"net"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/telemetry/otlp"
)

type grpcReceiver struct {
	coltrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (g *grpcReceiver) Export(ctx context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				g.names = append(g.names, s.Name)
			}
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// TestGRPCExport: OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports to a real OTLP
// gRPC trace service on loopback.
func TestGRPCExport(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc := &grpcReceiver{}
	srv := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(srv, rc)
	go srv.Serve(lis)
	defer srv.Stop()
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://" + lis.Addr().String(),
		"OTEL_EXPORTER_OTLP_PROTOCOL":        "grpc",
		"OTEL_EXPORTER_OTLP_INSECURE":        "true",
	}
	for k, v := range env {
		t.Setenv(k, v) // the exporter reads the standard variables itself
	}
	tel, err := otlp.Setup(t.Context(), func(k string) string { return env[k] })
	if err != nil || tel == nil {
		t.Fatalf("setup: %v %v", tel, err)
	}
	ctx, span := tel.InvokeAgent(t.Context(), telemetry.Agent{Name: "root", ID: "S", Model: "anthropic/claude-sonnet-5-5"})
	_, chat := tel.Chat(ctx, "anthropic/claude-sonnet-5-5")
	chat.EndChat(ctx, "claude-sonnet-5-5", telemetry.Usage{Input: 10, Output: 2}, nil)
	span.EndAgent("done", telemetry.Usage{Input: 10, Output: 2}, "")
	if err := tel.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.names) != 2 || rc.names[0] != "chat claude-sonnet-5-5" || rc.names[1] != "invoke_agent root" {
		t.Errorf("received %v", rc.names)
	}
}

// TestOffUnlessAsked: without an endpoint nothing is built, and a nil
// Telemetry's spans are no-ops.
func TestOffUnlessAsked(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"},
	} {
		tel, err := otlp.Setup(t.Context(), func(k string) string { return env[k] })
		if tel != nil || err != nil {
			t.Errorf("%v: %v %v", env, tel, err)
		}
		ctx, s := tel.InvokeAgent(t.Context(), telemetry.Agent{Name: "x"})
		s.EndAgent("done", telemetry.Usage{}, "")
		if telemetry.TraceParent(ctx) != "" {
			t.Errorf("a trace context with telemetry off")
		}
	}
	if _, err := otlp.Setup(t.Context(), func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}[k]
	}); err == nil {
		t.Error("http/json accepted")
	}
}

// BenchmarkOff is what a child pays for telemetry when it is off: one
// environment lookup per variable, no exporter.
func BenchmarkOff(b *testing.B) {
	getenv := func(string) string { return "" }
	for b.Loop() {
		tel, _ := otlp.Setup(context.Background(), getenv)
		ctx, s := tel.InvokeAgent(context.Background(), telemetry.Agent{Name: "x"})
		_, c := tel.Chat(ctx, "m")
		c.EndChat(ctx, "", telemetry.Usage{}, nil)
		s.EndAgent("done", telemetry.Usage{}, "")
	}
}
