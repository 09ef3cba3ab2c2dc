package tool

import (
	"context"
	"encoding/json"
)

// PromptAnswer is a permission prompt tool's answer (Claude Code's
// --permission-prompt-tool): allow, with Input replacing the call's
// input when set (updatedInput), or deny with Message.
type PromptAnswer struct {
	Allow   bool
	Input   json.RawMessage
	Message string
}

// PromptFunc decides a call that needs approval, for a run with no person
// to ask: toolName, the call's input and its tool_use id ("" outside the
// agent loop). An error is a denial.
type PromptFunc func(ctx context.Context, toolName string, input json.RawMessage, toolUseID string) (PromptAnswer, error)

// prompted puts a call that needs approval to env.Prompt. It returns the
// input to run (the prompt's updatedInput, checked as the model's would
// be: the schema, the configuration guard, and the deny rules, which an
// answer never overrides), or the refusal.
func (s *Set) prompted(ctx context.Context, env *Env, t Tool, input json.RawMessage) (json.RawMessage, Result, bool) {
	spec := t.Spec()
	id := ""
	if env.Call != nil {
		id = env.Call.ID
	}
	ans, err := env.Prompt(ctx, spec.Name, input, id)
	switch {
	case err != nil:
		return nil, Errorf("permission denied: %s needs approval and the permission prompt tool failed: %v", spec.Name, err), true
	case !ans.Allow:
		msg := ans.Message
		if msg == "" {
			msg = "the permission prompt tool denied it"
		}
		return nil, Errorf("permission denied: %s: %s", spec.Name, msg), true
	}
	if len(ans.Input) == 0 {
		return input, Result{}, false
	}
	if msg := validateInput(spec.Schema, ans.Input); msg != "" {
		return nil, Errorf("permission denied: the permission prompt tool's updatedInput for %s is invalid: %s", spec.Name, msg), true
	}
	if r, refused := refuseConfig(env, t, ans.Input); refused {
		return nil, r, true
	}
	if env.Perms != nil {
		if d := env.Perms.check(CanonicalName(spec.Name), t.ReadOnly(), ans.Input, env.Dir); d.Verdict == Deny {
			return nil, Errorf("permission denied: the permission prompt tool's updatedInput for %s is refused (%s)", spec.Name, d.Reason), true
		}
	}
	if env.Call != nil && env.Call.Prompted != nil {
		*env.Call.Prompted = ans.Input // this call's own
	}
	return ans.Input, Result{}, false
}
