package spawn

import (
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/taskdir"
)

// ForkFile holds a fork's seed: the parent's conversation and the id of the
// Task call that forked it.
const ForkFile = taskdir.Fork

// Fork history policies, as recorded in the envelope.
const (
	policyForkVerbatim = "fork-verbatim: the parent's conversation verbatim, then the brief as the next user turn (same system prompt, model and tools, so the provider's prompt cache is reused)"
	policyForkBlock    = "fork-background: the parent's conversation as one labelled background block (the agent's system prompt or model differs from the parent's)"
)

type ForkSeed struct {
	Messages []model.Message `json:"messages"`
	CallID   string          `json:"call_id"`
}

// History returns the calling agent's conversation inside a tool call.

// forkDef is the definition of a fork with no agent type: a copy of the
// parent, which cannot delegate further.
func forkDef() *registry.Definition {
	return &registry.Definition{Name: "fork", Description: "a copy of the parent agent", AllTools: true}
}

// verbatimFork reports whether def keeps the parent's system prompt and
// model, so the fork can replay the parent's cached prefix byte for byte.
func verbatimFork(def *registry.Definition) bool {
	return strings.TrimSpace(def.Prompt) == "" && (def.Model == "" || def.Model == "inherit") && def.AllTools
}

// prepareFork turns an envelope into a fork's: it writes the seed and sets
// the system prompt, tools and history policy.
func (d *Dispatcher) prepareFork(env *dispatch.Envelope, def *registry.Definition, req call.Spec, td *taskdir.Dir) error {
	seed := ForkSeed{Messages: redactMessages(req.History, d.cfg.Redact), CallID: req.CallID}
	if err := td.WriteJSON(ForkFile, seed, true); err != nil {
		return err
	}
	env.Fork = true
	if verbatimFork(def) {
		env.HistoryPolicy = policyForkVerbatim
		env.System = d.cfg.ParentSystem
		env.Model = d.cfg.ParentModel
		env.Effort = d.cfg.ParentEffort
	} else {
		env.HistoryPolicy = policyForkBlock
	}
	d.forkScope(env, def)
	return nil
}

// forkScope gives a verbatim fork the parent's tools in the parent's
// order, the delegation tools included (inert at the cap): the tool list
// heads the cached prefix. A fork with the Task tool has its parent's
// delegation scope, so that the tool reads the same (Roster); what it may
// really dispatch (AllowedDestinations) is that scope below the depth cap,
// and nothing at it or without the Task tool.
func (d *Dispatcher) forkScope(env *dispatch.Envelope, def *registry.Definition) {
	if verbatimFork(def) {
		env.Tools = append(append([]string(nil), d.cfg.ParentTools...), delegationTools...)
		env.ReadOnly = false
	}
	env.AllowedDestinations, env.Roster = []string{}, nil
	if !slices.Contains(env.Tools, "Task") {
		return
	}
	scope := []string{"*"}
	if d.cfg.Allowed != nil {
		scope = slices.Clone(d.cfg.Allowed)
	}
	env.Roster = scope
	if env.Depth < env.MaxDepth {
		env.AllowedDestinations = slices.Clone(scope)
	}
}

const ClosingInstructions = "When you finish, write your final answer as a summary: ## What I did, ## What I found, ## Files changed, ## Problems."

// redactMessages returns msgs with f applied to every text, so a fork's
// seed on disk holds no secret from the environment.
func redactMessages(msgs []model.Message, f func(string) string) []model.Message {
	if f == nil {
		return msgs
	}
	out := make([]model.Message, len(msgs))
	for i, m := range msgs {
		var parts []model.Part
		for _, p := range m.Content {
			if p.Type == model.PartThinking {
				// Signed: verbatim or not at all.
				if f(p.Text) == p.Text {
					parts = append(parts, p)
				}
				continue
			}
			p.Text = f(p.Text)
			parts = append(parts, p)
		}
		m.Content = parts
		out[i] = m
	}
	return out
}
