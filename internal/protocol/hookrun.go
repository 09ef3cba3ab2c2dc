package protocol

import "encoding/json"

// HookRun is the hooks of one of a child's own tool calls, as the root
// chose them from the user's configuration (matched, trusted), for the
// child to run itself: where the call ran (its isolated copy, or the tree
// it writes in place) and inside its own confinement, as its Bash
// commands run (package hooks, RunHere). It travels down in a HookReply;
// a process that relays the reply to its own child passes it on as it
// came. A child that does not run it only skips hooks on its own calls,
// which it could do by not asking.
type HookRun struct {
	// Event is HookPreToolUse or HookPostToolUse.
	Event string `json:"event"`
	// Payload is the hooks' stdin, built and redacted by the root; the
	// child sets its "cwd" to its own working directory.
	Payload json.RawMessage `json:"payload"`
	// Commands run in parallel, each with Payload on its stdin.
	Commands []HookCommand `json:"commands"`
}

// HookCommand is one hook command to run.
type HookCommand struct {
	Command string `json:"command"`
	// TimeoutMS is its timeout (0: the default).
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// Pins are the project files the command runs, as the root trusted
	// them: a command one of whose files is not so in the child's view
	// (its copy) is not run.
	Pins []HookPin `json:"pins,omitempty"`
}

// HookPin is one project file a hook command names: Path is project-
// relative and slash-separated; Sum is the SHA-256 of its content, or ""
// for a file that must not exist.
type HookPin struct {
	Path string `json:"path"`
	Sum  string `json:"sum,omitempty"`
}
