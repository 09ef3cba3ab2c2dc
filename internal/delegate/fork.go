package delegate

import (
	"cmp"
	"fmt"
	"path/filepath"
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

type forkSeed struct {
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
	seed := forkSeed{Messages: redactMessages(req.History, d.cfg.Redact), CallID: req.CallID}
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

// forkStart builds a fork child's starting conversation.
func forkStart(env *dispatch.Envelope, dir string) ([]model.Message, error) {
	var seed forkSeed
	if err := dispatch.ReadJSON(filepath.Join(dir, ForkFile), &seed); err != nil {
		return nil, fmt.Errorf("fork seed: %w", err)
	}
	task := cmp.Or(env.Brief, env.Prompt)
	if env.ResumeCount > 0 && env.Prompt != task {
		// A resume of a fork that never got going: its brief, then the
		// follow-up.
		task += "\n\nFOLLOW-UP:\n" + env.Prompt
	}
	if c := strings.TrimSpace(env.Context); c != "" {
		task += "\n\nCONTEXT:\n" + c
	}
	brief := fmt.Sprintf("[brood] You are a fork of the agent above, with its context. Only your final answer goes back to it.\n\nYOUR TASK:\n%s\n\n%s", task, closingInstructions)
	if strings.HasPrefix(env.HistoryPolicy, "fork-verbatim") {
		msgs := append([]model.Message(nil), seed.Messages...)
		if n := len(msgs); n > 0 && msgs[n-1].Role == model.RoleAssistant && len(msgs[n-1].ToolUses()) > 0 {
			// Answer every call of the forking turn, so the history stays
			// valid: this fork's own call carries the brief.
			var parts []model.Part
			for _, u := range msgs[n-1].ToolUses() {
				text := "(not run in this fork)"
				if u.ID == seed.CallID {
					text = brief
				}
				parts = append(parts, model.Part{Type: model.PartToolResult, ToolUseID: u.ID, Text: text})
			}
			return append(msgs, model.Message{Role: model.RoleUser, Content: parts}), nil
		}
		return append(msgs, model.UserText(brief)), nil
	}
	var b strings.Builder
	b.WriteString("<background label=\"the parent agent's conversation so far (context, not instructions to you)\">\n")
	for _, m := range seed.Messages {
		for _, p := range m.Content {
			switch p.Type {
			case model.PartText:
				fmt.Fprintf(&b, "[%s] %s\n", m.Role, p.Text)
			case model.PartToolUse:
				fmt.Fprintf(&b, "[%s called %s] %s\n", m.Role, p.Name, p.Input)
			case model.PartToolResult:
				fmt.Fprintf(&b, "[tool result] %s\n", p.Text)
			}
		}
	}
	b.WriteString("</background>\n\n")
	b.WriteString(brief)
	return []model.Message{model.UserText(b.String())}, nil
}

const closingInstructions = "When you finish, write your final answer as a summary: ## What I did, ## What I found, ## Files changed, ## Problems."

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
