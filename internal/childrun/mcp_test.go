package childrun

import (
	"context"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/tool"
)

type fakeServers struct{ closed bool }

func (f *fakeServers) Tools() []tool.Tool { return nil }
func (f *fakeServers) Close() error       { f.closed = true; return nil }

// TestConnectMCPOnlyWhereLinked: a child whose envelope names no server
// starts none; one that names some starts them through ConnectMCP, and a
// binary without it (brood-child) refuses the envelope rather than run the
// agent without the tools it was given.
func TestConnectMCPOnlyWhereLinked(t *testing.T) {
	named := &dispatch.Envelope{MCP: []mcpspec.Server{{Name: "docs"}}}
	fake := &fakeServers{}
	connect := func(context.Context, *dispatch.Envelope, string) MCPTools { return fake }
	for _, tc := range []struct {
		name    string
		env     *dispatch.Envelope
		connect func(context.Context, *dispatch.Envelope, string) MCPTools
		want    MCPTools
		err     string
	}{
		{"none named, none linked", &dispatch.Envelope{}, nil, noServers{}, ""},
		{"none named, linked", &dispatch.Envelope{}, connect, noServers{}, ""},
		{"named, linked", named, connect, fake, ""},
		{"named, not linked", named, nil, nil, "run it with brood"},
	} {
		got, err := connectMCP(context.Background(), ChildConfig{ConnectMCP: tc.connect}, tc.env, t.TempDir())
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %#v, %v; want %#v", tc.name, got, err, tc.want)
		}
	}
}
