package doctor

import (
	"context"
	"fmt"

	"github.com/broodhq/brood/internal/limits"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/sandbox"
)

// LimitsReport is what one child may consume by default, what holds each
// limit on this machine, and what keeps an agent's tools off the network.
type LimitsReport struct {
	// Defaults are the built-in limits (the [limits] settings and an
	// agent's `limits:` change them), by key, as people write them.
	Defaults map[string]string `json:"defaults"`
	// HeldBy says, by key, what enforces the limit here (or that nothing
	// does).
	HeldBy map[string]string `json:"held_by"`
	// ToolNetworkBan is what keeps the tool processes of an agent with
	// `network: none` off the network; ToolNetworkOK is false when nothing
	// can (such an agent's commands are then refused).
	ToolNetworkBan string `json:"tool_network_ban"`
	ToolNetworkOK  bool   `json:"tool_network_ok"`
}

// collectLimits probes what a pool of this process would hold its children
// with.
func collectLimits(ctx context.Context) *LimitsReport {
	d := limits.Defaults()
	r := &LimitsReport{Defaults: map[string]string{}, HeldBy: pool.ProbeLimits(ctx, "auto")}
	for _, k := range limits.Fields {
		r.Defaults[k] = limits.Format(k, d.Get(k))
	}
	r.ToolNetworkBan, r.ToolNetworkOK = sandbox.NetworkBan()
	return r
}

// limitRows are brood doctor's lines for the limits.
func limitRows(r *LimitsReport) [][2]string {
	if r == nil {
		return nil
	}
	var rows [][2]string
	for _, k := range limits.Fields {
		rows = append(rows, [2]string{"child " + k + " limit", fmt.Sprintf("%s by default, held by %s", r.Defaults[k], r.HeldBy[k])})
	}
	return append(rows, [2]string{"tools of network: none agents", r.ToolNetworkBan})
}
