// Package tool holds the tools an agent can call (Read, Write, Edit, Bash,
// Glob, Grep, LS), the permission rules that gate them, and the Set that the
// agent loop dispatches calls through. Tools never know about processes,
// subagents or the agent loop; the delegation tools (Task, TaskOutput, ...)
// live in package delegate and implement the same Tool interface.
package tool

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/broodhq/brood/internal/model"
)

// Result is what a tool call returns to the model. A failing tool returns a
// Result with IsError set and a message the model can act on; only a broken
// runtime (not a bad call) is a Go error, and even then the agent loop turns
// it into a Result rather than stopping.
type Result struct {
	Content string
	IsError bool
	// Refused is set by brood's own refusal of the call (the permission
	// rules, a prompt's no, a hook's block, a refused delegation): the call
	// never ran. Only this flag says so; a result's text is the tool's or
	// the file's, whatever it reads like.
	Refused bool
}

// Errorf builds an error Result.
func Errorf(format string, args ...any) Result {
	return Result{Content: sprintf(format, args...), IsError: true}
}

// Tool is one capability the model can invoke by name.
type Tool interface {
	// Spec is the name, description and JSON schema the model sees. The name
	// is Claude Code's spelling (Read, Bash, ...).
	Spec() model.ToolSpec
	// ReadOnly reports whether the tool can never change the file system.
	ReadOnly() bool
	// Run executes one call. It must honour ctx cancellation promptly and
	// must be safe to call concurrently with other tools.
	Run(ctx context.Context, env *Env, input json.RawMessage) Result
}

// ReadOnlyByInput is a Tool that writes nothing itself but whose call may
// start something that does: the Task tool, whose subagent is read-only or
// a writer by its definition. ReadOnlyCall reports whether this call
// writes nothing, and when it may, why (plan mode's refusal says it).
type ReadOnlyByInput interface {
	ReadOnlyCall(input json.RawMessage) (readOnly bool, why string)
}

// Rerunner is a Tool that says whether a call of it that may already have
// run (a fleet pick-up after the worker that made it died) may run again.
type Rerunner interface {
	Rerunnable() bool
}

// SafeToRerun reports whether a call of t that may already have run may
// run again without the model knowing: a read-only tool's, unless the tool
// says otherwise (SendMessage is read-only for a read-only agent, but it
// queues a message). An MCP tool's never is: its read-only flag is its
// server's readOnlyHint, a claim brood cannot check.
func SafeToRerun(t Tool) bool {
	if strings.HasPrefix(strings.ToLower(t.Spec().Name), "mcp__") {
		return false
	}
	if r, ok := t.(Rerunner); ok {
		return r.Rerunnable()
	}
	return t.ReadOnly()
}
