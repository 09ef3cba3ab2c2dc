package settings

import (
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/limits"
	"github.com/broodhq/brood/internal/trust"
)

// TestGateAgentAsks (redteam P2-1): a project agent file's timeout,
// maxTurns and limits above the user's layers, and an isolation looser
// than theirs (review42 P3), are widening, named on the
// trust line with the file in the grant's key; at or below them, the file
// is not in the key and nothing is said.
func TestGateAgentAsks(t *testing.T) {
	base := Defaults()
	base.Pool.Timeout.Duration, base.MaxTurns = 2*time.Second, 10
	base.Pool.Timeouts = map[string]Duration{"fast": {Duration: time.Minute}}
	for _, tc := range []struct {
		name string
		asks AgentAsks
		want string // "" for no widening
	}{
		{name: "timeout above", asks: AgentAsks{Name: "slow", Timeout: 10 * time.Second}, want: "agent slow's timeout 10s, above 2s (.claude/agents/a.md)"},
		{name: "timeout below", asks: AgentAsks{Name: "slow", Timeout: time.Second}},
		{name: "timeout within pool.timeouts", asks: AgentAsks{Name: "fast", Timeout: 30 * time.Second}},
		{name: "maxTurns above", asks: AgentAsks{Name: "slow", MaxTurns: 500}, want: "agent slow's maxTurns 500, above 10"},
		{name: "maxTurns equal", asks: AgentAsks{Name: "slow", MaxTurns: 10}},
		{name: "limits above", asks: AgentAsks{Name: "slow", Limits: limits.Set{Processes: 1 << 20}}, want: "agent slow's limits processes"},
		// review42 P3: a writer in place where the settings isolate it.
		{name: "isolation none", asks: AgentAsks{Name: "w", Isolation: "none"}, want: "agent w's isolation none, where yours is auto: it would write in place on your tree (.claude/agents/a.md)"},
		{name: "isolation auto", asks: AgentAsks{Name: "w", Isolation: "auto"}},
		{name: "isolation worktree", asks: AgentAsks{Name: "w", Isolation: "worktree"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := trust.File{Rel: ".claude/agents/a.md", Data: []byte("x")}
			asks := tc.asks
			_, pt, _ := gate("/p", base, base, nil, []GatedFile{{File: f, Agent: &asks}}, Trust{})
			got := strings.Join(pt.Widening, "; ")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("widening %q, want %q", got, tc.want)
			}
			if in := len(pt.Files) > 0; in != (tc.want != "") {
				t.Fatalf("the file in the key: %v, want %v", in, tc.want != "")
			}
		})
	}
}
