package tool

import "time"

// Env is what every tool call runs against: where the workspace is, what it
// may do there, and where to keep large outputs. One Env is shared by all the
// concurrent calls of an agent, so tools must treat it as read-only.
type Env struct {
	// Dir is the absolute workspace root. Relative paths resolve against it.
	Dir string
	// Environ is the environment of the commands Bash runs (brood's
	// provider keys left out); nil: the process's own.
	Environ []string
	// OutputDir is where tools save whole outputs that were capped in the
	// result (Bash). Empty means os.TempDir().
	OutputDir string
	// Perms gates calls by rule. Nil allows everything.
	Perms *Permissions
	// Interactive is true when a human can answer a permission prompt.
	// Without one, every call that would ask is denied.
	Interactive bool
	// Session is the id of the root transcript this agent writes ("": the
	// dispatcher's own): the Task and Workflow tools record it on the
	// tasks they start.
	Session string
	// Ask is called for a permission prompt when Interactive is true, with
	// the tool, what it would act on (command or path), why it needs asking
	// (Decision.Reason: for a command a prefix rule covers, the option that
	// writes a file or runs a program) and the narrowest rules that together
	// would allow it (for an "always" answer). It returns whether the call
	// may go ahead.
	Ask func(toolName, subject, reason string, rules []string) bool
	// Prompt, when set, decides the calls that need approval where no one
	// is asked (not Interactive): claude -p's --permission-prompt-tool.
	Prompt PromptFunc
	// ReadOnlyScope refuses every tool that is not ReadOnly, whatever the
	// rules say: the tool layer's own floor under the kernel sandbox.
	ReadOnlyScope bool
	// BashTimeout is the default timeout of one Bash command (0: 2 minutes).
	BashTimeout time.Duration
	// OutputLimit caps the bytes of tool output returned inline (0: 30000).
	OutputLimit int
	// ConfigRoot, when set, refuses every write (Write, Edit) to brood's
	// and Claude Code's configuration beneath it (trust.IsConfigPath): a
	// subagent never changes .brood/ (less its records), .claude/ or
	// .mcp.json on its own.
	ConfigRoot string
	// ConfigDirs are directories (or files) refused wholesale, as
	// ConfigRoot's configuration is: the user's own (~/.config/brood,
	// ~/.claude, ~/.claude.json), where brood keeps settings, agents and
	// project trust grants, and Claude Code the user's MCP servers.
	ConfigDirs []string
	// Redactor scrubs secrets from command output (nil: the secret-looking
	// variables of this process's environment). Build it once per process
	// with NewProjectRedactor, so .env values are caught as well.
	Redactor *Redactor
	// NoNetwork starts every tool process (Bash and all it starts) without
	// network (a definition's `network: none`); the calling process keeps
	// its own.
	NoNetwork bool
	// NoUnixSockets starts every tool process without unix sockets
	// (sandbox.NoUnixSocketsForCommand): a child's, unless the user's own
	// settings allow them (sandbox.unix_sockets).
	NoUnixSockets bool
	// Spills bounds the command output kept on disk over all of the
	// agent's commands, and removes it when the run ends (nil: each
	// command's file is capped alone and kept).
	Spills *Spills
	// OnGroup, when set, is told of every process group Bash starts
	// (alive) and of each one once it is empty (!alive), so that a
	// supervisor can kill what is left if this process dies first.
	OnGroup func(pgid int, alive bool)
	// Call is the model's call this Env was copied for (ForCall; nil: the
	// agent's own Env, or a tool run outside the agent loop).
	Call *Call
}
