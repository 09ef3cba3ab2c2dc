package tool

import (
	"encoding/json"

	"github.com/broodhq/brood/internal/model"
)

// Call is what a tool knows of the model's call it runs for, typed on its
// Env rather than hidden in its context: the agent loop hands every call a
// copy of the agent's Env with its own Call (ForCall). Nil outside the
// agent loop (a tool run directly).
type Call struct {
	// ID is the id of the tool_use being run.
	ID string
	// Prompted, when set, receives the input that ran when a permission
	// prompt tool's updatedInput replaced the call's (Set.Run writes it),
	// for the transcript's record of what ran. A pointer, so a copy of
	// the Call (WithHookVerdict) writes to the same place.
	Prompted *json.RawMessage
	// History is the conversation up to and including the assistant
	// message that made the call: the other calls of this turn are in its
	// last message (how many writers a turn dispatches together), and a
	// fork seeds its child with it verbatim. Shared by the turn's calls:
	// read it, never change it.
	History []model.Message
	// HookVerdict is what a PreToolUse hook said of the call: "",
	// HookAllow (skip the prompt an ask would raise) or HookAsk (ask where
	// a rule allows). Deny rules and the read-only scope still hold.
	HookVerdict string
}

// ForCall returns a copy of env (nil: an empty Env) for one call c.
func (env *Env) ForCall(c *Call) *Env {
	var e Env
	if env != nil {
		e = *env
	}
	e.Call = c
	return &e
}

// CallID is the id of the call env was made for ("" outside one).
func (env *Env) CallID() string {
	if env == nil || env.Call == nil {
		return ""
	}
	return env.Call.ID
}

// History is the conversation of the call env was made for (nil outside
// one).
func (env *Env) History() []model.Message {
	if env == nil || env.Call == nil {
		return nil
	}
	return env.Call.History
}
