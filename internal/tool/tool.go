// Package tool holds the tools an agent can call (Read, Write, Edit, Bash,
// Glob, Grep, LS), the permission rules that gate them, and the Set that the
// agent loop dispatches calls through. Tools never know about processes,
// subagents or the agent loop; the delegation tools (Task, TaskOutput, ...)
// live in package delegate and implement the same Tool interface.
package tool

import (
	"context"
	"encoding/json"

	"github.com/broodhq/brood/internal/model"
)

// Result is what a tool call returns to the model. A failing tool returns a
// Result with IsError set and a message the model can act on; only a broken
// runtime (not a bad call) is a Go error, and even then the agent loop turns
// it into a Result rather than stopping.
type Result struct {
	Content string
	IsError bool
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
