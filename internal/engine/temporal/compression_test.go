package temporal_test

import (
	"context"
	"net"
	"sync"
	"testing"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"

	"github.com/broodhq/brood/internal/engine/temporal"
)

// encodings is a gRPC server's record of the encoding each request came
// in (stats.InHeader: "" or identity when uncompressed).
type encodings struct {
	mu  sync.Mutex
	got map[string]string // method: encoding
}

func (e *encodings) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (e *encodings) HandleRPC(_ context.Context, s stats.RPCStats) {
	if h, ok := s.(*stats.InHeader); ok && h.FullMethod != "" {
		e.mu.Lock()
		e.got[h.FullMethod] = h.Compression
		e.mu.Unlock()
	}
}
func (e *encodings) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (e *encodings) HandleConn(context.Context, stats.ConnStats)                       {}

// frontendAt is a gRPC server on addr answering every WorkflowService
// call "unimplemented" (Dial still connects: the SDK takes it for an old
// server), recording each request's encoding.
func frontendAt(t *testing.T, addr string) (string, *encodings) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("listen on %s: %v", addr, err)
	}
	e := &encodings{got: map[string]string{}}
	s := grpc.NewServer(grpc.StatsHandler(e))
	workflowservice.RegisterWorkflowServiceServer(s, &workflowservice.UnimplementedWorkflowServiceServer{})
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return l.Addr().String(), e
}

// outsideIP is an address of this host that is not loopback ("": none).
func outsideIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

// TestLoopbackFrontendUncompressed: a client dialled (workers' and
// submitters' alike) to a frontend on loopback sends its requests
// uncompressed (gzip there costs CPU on both ends for nothing: 6 % of the
// workers' in the 300-call benchmark); to any other address, gzip, the
// SDK's default, as before.
func TestLoopbackFrontendUncompressed(t *testing.T) {
	for _, tc := range []struct {
		name, listen, dial string // dial: the host to dial ("": listen's)
		gzip               bool
	}{
		{"127.0.0.1", "127.0.0.1:0", "", false},
		{"localhost", "127.0.0.1:0", "localhost", false},
		{"another address of this host", outsideIP() + ":0", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.listen == ":0" {
				t.Skip("this host has no address but loopback")
			}
			addr, e := frontendAt(t, tc.listen)
			if tc.dial != "" {
				_, port, _ := net.SplitHostPort(addr)
				addr = net.JoinHostPort(tc.dial, port)
			}
			c, err := temporal.Dial(t.Context(), temporal.ClientOptions{HostPort: addr})
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			e.mu.Lock()
			defer e.mu.Unlock()
			if len(e.got) == 0 {
				t.Fatal("the frontend saw no request")
			}
			for method, enc := range e.got {
				if gz := enc == "gzip"; gz != tc.gzip {
					t.Errorf("%s came in encoded %q, want gzip = %v", method, enc, tc.gzip)
				}
			}
		})
	}
}
