package spawn

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/textline"
	"github.com/broodhq/brood/internal/tool"
)

// Tools returns the delegation tools for this process. It returns nil at or
// over the depth cap: the tools do not exist there at all.
func (d *Dispatcher) Tools() []tool.Tool {
	if !d.CanDelegate() {
		return nil
	}
	return d.AllTools()
}

// AllTools returns the delegation tools whatever the depth (a fork child's
// own set): delegate's three over d, and the extras' (Extras.Tools).
func (d *Dispatcher) AllTools() []tool.Tool {
	ts := delegate.Tools(tools{d})
	if d.cfg.Extras.Tools != nil {
		ts = append(ts, d.cfg.Extras.Tools(d)...)
	}
	return ts
}

// tools is the Dispatcher as package delegate's tools see it.
type tools struct{ d *Dispatcher }

func (t tools) Call(ctx context.Context, s call.Spec) (*call.Result, error) { return t.d.Call(ctx, s) }
func (t tools) Start(ctx context.Context, s call.Spec) (string, error)      { return t.d.Start(ctx, s) }
func (t tools) ResumeBackground(ctx context.Context, id, prompt string) error {
	return t.d.ResumeBackground(ctx, id, prompt)
}
func (t tools) Output(ctx context.Context, id string, wait time.Duration) (string, string, error) {
	return t.d.Output(ctx, id, wait)
}
func (t tools) Send(id, from, message string) error {
	return sendTo(t.d.finder(), id, from, message)
}
func (t tools) WritersInTurn(h []model.Message) int { return t.d.writersInTurn(h) }
func (t tools) IsFork() bool                        { return t.d.cfg.IsFork }
func (t tools) Workspace() string                   { return t.d.cfg.Workspace }
func (t tools) Background(agent string) bool {
	def, ok := t.d.cfg.Registry.Get(agent)
	return ok && def.Background
}

// ReadOnlyAgent reports whether agent's definition is read-only (the
// dispatcher then holds its child read-only), and when not, why.
func (t tools) ReadOnlyAgent(agent string) (bool, string) {
	def, ok := t.d.cfg.Registry.Get(agent)
	if !ok {
		return false, fmt.Sprintf("no agent %q is defined here", agent)
	}
	if def.ReadOnly {
		return true, ""
	}
	return false, fmt.Sprintf("agent %q may write (%s); plan mode delegates only to read-only agents (explore, plan, or an agent whose tools are read-only)", def.Name, writingTools(def))
}

// writingTools says which of def's tools may write.
func writingTools(def *registry.Definition) string {
	if def.AllTools {
		return "it inherits every tool"
	}
	var w []string
	for _, n := range def.Tools {
		if !slices.Contains(registry.ReadOnlyTools(), n) {
			w = append(w, n)
		}
	}
	if len(w) == 0 {
		return "its definition is not read-only"
	}
	return "its tools include " + strings.Join(w, ", ")
}

// Roster lists the agent types this dispatcher may dispatch.
func (t tools) Roster() string {
	if t.d.cfg.Allowed == nil {
		return t.d.cfg.Registry.Roster()
	}
	var b strings.Builder
	for _, name := range t.d.names() {
		def, _ := t.d.cfg.Registry.Get(name)
		fmt.Fprintf(&b, "- %s: %s\n", def.Name, textline.Line(def.Description, 120))
	}
	return b.String()
}
