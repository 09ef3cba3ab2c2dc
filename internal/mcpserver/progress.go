package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/broodhq/brood/internal/spawn"
)

// progress sends MCP progress notifications for one Task call, when the
// client asked for them with a progress token: one when the child starts,
// one per batch of tool names it reports, one when it stops.
type progress struct {
	session *mcp.ServerSession
	token   any

	mu sync.Mutex
	n  float64
}

func newProgress(req *mcp.CallToolRequest) *progress {
	p := &progress{session: req.Session}
	if req.Params != nil {
		p.token = req.Params.GetProgressToken()
	}
	return p
}

func (p *progress) event(ctx context.Context, e spawn.Event) { p.send(ctx, message(e)) }

// send sends one progress notification, if the client asked for them.
func (p *progress) send(ctx context.Context, msg string) {
	if p.token == nil || p.session == nil || msg == "" {
		return
	}
	// One notification at a time, in order, with a strictly increasing
	// progress value as the protocol asks.
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	_ = p.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: msg})
}

// message renders an event in one line. Tool and agent names that a
// descendant relayed are the child's words: only plain identifiers pass.
func message(e spawn.Event) string {
	who := fmt.Sprintf("%s %s (depth %d)", safeName(e.Agent), safeName(e.TaskID), e.Depth)
	switch e.Type {
	case "dispatch_start":
		return who + ": started"
	case "progress":
		names := make([]string, 0, len(e.Tools))
		for _, t := range e.Tools {
			names = append(names, safeName(t))
		}
		return who + ": " + strings.Join(names, ", ")
	case "dispatch_stop":
		return who + ": " + safeName(e.Status)
	}
	return ""
}

// safeName keeps a name that is a plain identifier (letters, digits and
// _ - . :, at most 64 bytes) and replaces anything else with "?".
func safeName(s string) string {
	if s == "" || len(s) > 64 {
		return "?"
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:", r)
		if !ok {
			return "?"
		}
	}
	return s
}
