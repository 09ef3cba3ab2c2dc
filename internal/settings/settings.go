// Package settings resolves brood's configuration: flag > environment >
// project .brood/settings.toml > user ~/.config/brood/settings.toml >
// defaults. Every limit brood enforces is a setting here; none is hard-coded
// elsewhere. The package reads files and the environment it is handed, and
// holds no global state.
package settings

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/trust"
)

// Settings is the resolved configuration.
type Settings struct {
	// Model is provider/model (anthropic/claude-sonnet-5-5, openai/gpt-5,
	// ollama/qwen3, script:FILE). Empty means none configured.
	Model  string `toml:"model"`
	Effort string `toml:"effort"`
	// modelClaude is set when Model came from a Claude Code settings.json
	// (its "model"): a project's is held back until the project is trusted.
	modelClaude bool
	// modeClaude is set when Permissions.Mode came from a Claude Code
	// settings.json (its permissions.defaultMode): the trust notice
	// names that file's key.
	modeClaude bool
	// ClaudeEnv is a Claude Code settings.json's "env": the variables set
	// for every process brood and its agents start (Factory.Load sets them
	// in brood's own environment). A project's are held back until it is
	// trusted.
	ClaudeEnv map[string]string `toml:"-"`
	// MaxTurns caps an agent's turns (default 50).
	MaxTurns int `toml:"max_turns"`
	// MaxTokens caps one model response.
	MaxTokens int `toml:"max_tokens"`
	// TokenBudget is advisory: warnings at 80% and 100%, never a stop.
	TokenBudget int64 `toml:"token_budget"`
	// MaxSubagentDepth is the tree-wide nesting cap (default 1: the root may
	// delegate, its children may not).
	MaxSubagentDepth int `toml:"maxSubagentDepth"`
	// FixAttempts is how often a child may fail the same call before it must
	// stop and report a checkpoint (default 3).
	FixAttempts int `toml:"fix_attempts"`
	// TestCommands are the commands that count as running tests when a
	// child claims tests pass (nil: guard.DefaultTestCommands).
	TestCommands []string `toml:"test_commands"`

	Permissions Permissions `toml:"permissions"`
	// Guardrails set each edge guardrail's policy (reject | warn).
	Guardrails Guardrails `toml:"guardrails"`
	Agents     Agents     `toml:"agents"`
	Pool       Pool       `toml:"pool"`
	Results    Results    `toml:"results"`
	Bash       Bash       `toml:"bash"`
	Isolation  Isolation  `toml:"isolation"`
	// Sandbox says what to do where the kernel cannot confine a child.
	Sandbox Sandbox `toml:"sandbox"`
	// Limits are what one child may consume (settings/limits.go).
	Limits Limits `toml:"limits"`
	// ProjectFiles configures CLAUDE.md / AGENTS.md in the root's prompt.
	ProjectFiles ProjectFiles `toml:"project_files"`
	// Temporal configures the fleet engine.
	Temporal Temporal `toml:"temporal"`
	// Worker configures brood worker (the remotes it may fetch from).
	Worker Worker `toml:"worker"`
	// Store is the URL of the store every worker and the submitter share
	// (file:///shared/path, s3://bucket/prefix?region=R): code snapshots,
	// transcripts, patches, large results. Empty: none (local runs need none).
	Store string `toml:"store"`

	// Trust is what the project gate found (settings/trust.go): never read
	// from a file.
	Trust ProjectTrust `toml:"-" json:"-"`
}

// Permissions are the tool rules (Claude Code syntax: Bash(npm test:*), Edit(docs/**)).
type Permissions struct {
	Mode  string   `toml:"mode"` // default, acceptEdits, bypassPermissions, plan
	Allow []string `toml:"allow"`
	Deny  []string `toml:"deny"`
	Ask   []string `toml:"ask"`
	// AdditionalDirectories are a Claude Code settings.json's
	// permissions.additionalDirectories, absolute: brood run takes them as
	// --add-dir's. A project's are held back until it is trusted.
	AdditionalDirectories []string `toml:"-"`
	// AskFrom are the files that name each ask rule (Resolve), for the
	// refusal by one to say where to remove it: never read from a file.
	AskFrom []trust.RuleFiles `toml:"-" json:"-"`
}

// Guardrails are the policies of the edge guardrails a parent applies to a
// child's return (internal/guard): "reject" makes a finding of that kind
// reject the result (status rejected, resumable with the reason as the
// follow-up), "warn" only reports it as a Concern. Defaults: shape warn,
// scope, evidence and unauthorized reject.
type Guardrails struct {
	Shape        string `toml:"shape"`
	Scope        string `toml:"scope"`
	Evidence     string `toml:"evidence"`
	Unauthorized string `toml:"unauthorized"`
}

// fields are the policies with their keys.
func (g *Guardrails) fields() []struct {
	key string
	v   *string
} {
	return []struct {
		key string
		v   *string
	}{{"guardrails.shape", &g.Shape}, {"guardrails.scope", &g.Scope}, {"guardrails.evidence", &g.Evidence}, {"guardrails.unauthorized", &g.Unauthorized}}
}

// Policies are the guardrails' policies by kind (guard.Policies' shape).
func (g Guardrails) Policies() map[string]string {
	return map[string]string{"shape": g.Shape, "scope": g.Scope, "evidence": g.Evidence, "unauthorized": g.Unauthorized}
}

// Agents configures the agent registry.
type Agents struct {
	// Claude turns the .claude/agents directories on (default true).
	Claude *bool `toml:"claude"`
	// Isolation is the default for mutating children: "" / none / worktree.
	Isolation string `toml:"isolation"`
	// AllowConfigChanges lets subagents change .brood/ and .claude/
	// (trust.IsConfigPath); by default such changes are refused and reported.
	AllowConfigChanges bool `toml:"allow_config_changes"`
}

// ClaudeEnabled reports whether .claude/agents directories load.
func (a Agents) ClaudeEnabled() bool { return a.Claude == nil || *a.Claude }

// Pool configures the subagent process pool and its lifeguard.
type Pool struct {
	Concurrency       int      `toml:"concurrency"`        // root pool (default 5)
	NestedConcurrency int      `toml:"nested_concurrency"` // pools below the root (default 2)
	HeartbeatTimeout  Duration `toml:"heartbeat_timeout"`  // lifeguard: kill after this much silence (60s)
	PingInterval      Duration `toml:"ping_interval"`      // child heartbeat period (5s)
	Timeout           Duration `toml:"timeout"`            // hard wall-clock limit per child (30m)
	KillGrace         Duration `toml:"kill_grace"`         // SIGTERM → SIGKILL wait (3s)
	// Containment is how a child's process tree is held: auto (a cgroup
	// where cgroup v2 is writable, else a PID namespace) or pidns (the
	// fallback, forced: for tests).
	Containment string `toml:"containment"`
	// Timeouts per agent type override Timeout (a definition's own timeout
	// beats both).
	Timeouts map[string]Duration `toml:"timeouts"`
	// Warm is how many read-only children the root keeps started ahead of
	// their tasks, each waiting for its envelope in its own process group,
	// cgroup and sandbox (docs/architecture.md "Warm children"; default 0).
	Warm int `toml:"warm"`
}

// Results configures what the parent sees of a child's result.
type Results struct {
	InlineLimit int `toml:"inline_limit"` // bytes of summary inline (default 20000)
}

// Bash configures the Bash tool.
type Bash struct {
	Timeout     Duration `toml:"timeout"`      // default 2m
	OutputLimit int      `toml:"output_limit"` // default 30000
}

// Isolation configures worktree children and the kernel sandbox.
type Isolation struct {
	// ForceWorktree skips the overlay fast path and uses a git worktree.
	ForceWorktree bool `toml:"force_worktree"`
	// NoLandlock turns the kernel sandbox off (for a kernel whose Landlock
	// misbehaves): read-only agents then lose Bash and rely on the tool
	// layer alone, and their results say so.
	NoLandlock bool `toml:"no_landlock"`
}

// Sandbox configures what brood does where the kernel cannot hold a
// child's class (docs/trust.md "How each child is confined").
type Sandbox struct {
	// Require refuses to start a child the kernel cannot confine (no
	// Landlock, isolation.no_landlock, an in-place writer without user
	// namespaces) instead of running it with a note in its result. Off by
	// default, so machines without Landlock keep working.
	Require bool `toml:"require"`
	// Hide are more paths no child reads, beside the credential stores
	// brood hides by default (isolate.DefaultHidden); "~/" is the home.
	// Read from the user's own settings only (never a project's).
	Hide []string `toml:"hide"`
	// UnixSockets lets children's tool processes make unix sockets
	// (docker, ssh and gpg agents, D-Bus, tests that listen on one):
	// off by default, a path to a service acting outside the sandbox.
	// Read from the user's own settings only.
	UnixSockets bool `toml:"unix_sockets"`
}

// ProjectFiles configures the instruction files (CLAUDE.md, AGENTS.md)
// read into the root agent's system prompt, and into its subagents'.
type ProjectFiles struct {
	// Off turns them off, for the root and every subagent.
	Off bool `toml:"off"`
	// MaxBytes caps each file (default 40000); a longer one is cut with a
	// note.
	MaxBytes int `toml:"max_bytes"`
	// Children says which subagents get them too, whole up to
	// ChildMaxBytes: "writers" (the default: every agent that may write;
	// read-only agents, such as the explore and plan built-ins, get none),
	// "all" or "none".
	Children string `toml:"children"`
	// ChildMaxBytes caps each file in a subagent's prompt (default 40000).
	ChildMaxBytes int `toml:"child_max_bytes"`
}

// ProjectFiles' Children values.
const (
	ChildrenWriters = "writers"
	ChildrenAll     = "all"
	ChildrenNone    = "none"
)

// ForChild reports whether a subagent gets the project files: readOnly is
// whether it can write nothing.
func (p ProjectFiles) ForChild(readOnly bool) bool {
	switch {
	case p.Off || p.Children == ChildrenNone:
		return false
	case p.Children == ChildrenAll:
		return true
	}
	return !readOnly
}

// Duration is a time.Duration written as "60s" in TOML.
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration: write it like 90s, 5m or 1h30m", b)
	}
	d.Duration = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// MaxWarm bounds pool.warm: idle processes are not free.
const MaxWarm = 64

// Defaults returns the built-in settings.
func Defaults() Settings {
	return Settings{
		MaxTurns:         50,
		MaxTokens:        16000,
		MaxSubagentDepth: 1,
		FixAttempts:      3,
		Permissions:      Permissions{Mode: "default"},
		Guardrails:       Guardrails{Shape: "warn", Scope: "reject", Evidence: "reject", Unauthorized: "reject"},
		Pool: Pool{
			Concurrency:       5,
			NestedConcurrency: 2,
			HeartbeatTimeout:  Duration{60 * time.Second},
			PingInterval:      Duration{5 * time.Second},
			Timeout:           Duration{30 * time.Minute},
			KillGrace:         Duration{3 * time.Second},
		},
		Results:      Results{InlineLimit: 20000},
		ProjectFiles: ProjectFiles{MaxBytes: 40000, Children: ChildrenWriters, ChildMaxBytes: 40000},
		Bash:         Bash{Timeout: Duration{2 * time.Minute}, OutputLimit: 30000},
	}
}

// Sources says where to look.
type Sources struct {
	ProjectRoot string              // "" = no project file
	Home        string              // "" = no user file
	Getenv      func(string) string // nil = no environment
	// Trust gates the project's own files (.brood/settings.toml,
	// .claude/settings.json, ...): what they allow beyond the layers below
	// is honoured only for a trusted project (settings/trust.go).
	Trust Trust
	// Gated are the other project files the same grant covers (.mcp.json,
	// agent files that start MCP servers, hooks): their content is part of
	// the grant's key and what they allow is named in the notice.
	Gated []GatedFile
	// Only are the kinds of file read (user, project, local: claude -p's
	// --setting-sources); nil reads every one.
	Only []string
	// UserFile, when set, is read instead of ~/.config/brood/settings.toml:
	// a delegating child's copy of its parent's, less what only the root
	// and the fleet use (EnvUserSettings names it).
	UserFile string
	// OwnLocal vouches for the project's local files that are the
	// person's own (RootOwnLocal in the root, the inherited grant's Own in
	// a subagent); nil vouches for none: every local file is gated.
	OwnLocal OwnLocal
}

// EnvUserSettings names, in a delegating child's environment, the copy of
// the user's settings its parent wrote in its task directory
// (isolate.WriteChildSettings): the child reads it, never the user's file,
// which it cannot read (review C7).
const EnvUserSettings = "BROOD_USER_SETTINGS"

// Paths returns the user and project settings files for src.
func (src Sources) Paths() (user, project string) {
	if src.UserFile != "" {
		user = src.UserFile
	} else if src.Home != "" {
		user = filepath.Join(src.Home, ".config", "brood", "settings.toml")
	}
	if src.ProjectRoot != "" {
		project = taskdir.Open(src.ProjectRoot).Settings()
	}
	return user, project
}

// Env variables brood reads, and the setting each one sets.
var envVars = []struct {
	name, key string
	apply     func(*Settings, string) error
}{
	{"BROOD_MODEL", "model", func(s *Settings, v string) error { s.Model = v; return nil }},
	{"BROOD_EFFORT", "effort", func(s *Settings, v string) error { s.Effort = v; return nil }},
	{"BROOD_MAX_TURNS", "max_turns", func(s *Settings, v string) error { return setInt(&s.MaxTurns, v) }},
	{"BROOD_MAX_SUBAGENT_DEPTH", "maxSubagentDepth", func(s *Settings, v string) error { return setInt(&s.MaxSubagentDepth, v) }},
	{"BROOD_CONCURRENCY", "pool.concurrency", func(s *Settings, v string) error { return setInt(&s.Pool.Concurrency, v) }},
	{"BROOD_WARM", "pool.warm", func(s *Settings, v string) error { return setInt(&s.Pool.Warm, v) }},
	{"BROOD_HEARTBEAT_TIMEOUT", "pool.heartbeat_timeout", func(s *Settings, v string) error { return setDur(&s.Pool.HeartbeatTimeout, v) }},
	{"BROOD_PING_INTERVAL", "pool.ping_interval", func(s *Settings, v string) error { return setDur(&s.Pool.PingInterval, v) }},
	{"BROOD_TIMEOUT", "pool.timeout", func(s *Settings, v string) error { return setDur(&s.Pool.Timeout, v) }},
	{"BROOD_PERMISSION_MODE", "permissions.mode", func(s *Settings, v string) error { s.Permissions.Mode = v; return nil }},
	{"BROOD_TEMPORAL_ADDRESS", "temporal.address", func(s *Settings, v string) error { s.Temporal.Address = v; return nil }},
	{"BROOD_TEMPORAL_NAMESPACE", "temporal.namespace", func(s *Settings, v string) error { s.Temporal.Namespace = v; return nil }},
	{"BROOD_TEMPORAL_TASK_QUEUE", "temporal.task_queue", func(s *Settings, v string) error { s.Temporal.TaskQueue = v; return nil }},
	{"BROOD_STORE", "store", func(s *Settings, v string) error { s.Store = v; return nil }},
	{"BROOD_ALLOW_CONFIG_CHANGES", "agents.allow_config_changes", func(s *Settings, v string) error {
		b, err := strconv.ParseBool(v)
		s.Agents.AllowConfigChanges = b
		return err
	}},
	{"BROOD_CONTAINMENT", "pool.containment", func(s *Settings, v string) error { s.Pool.Containment = v; return nil }},
	{"BROOD_FORCE_WORKTREE", "isolation.force_worktree", func(s *Settings, v string) error {
		b, err := strconv.ParseBool(v)
		s.Isolation.ForceWorktree = b
		return err
	}},
}

// EnvNames lists the environment variables Load reads.
func EnvNames() []string {
	out := make([]string, len(envVars))
	for i, e := range envVars {
		out[i] = e.name
	}
	return out
}

func applyEnv(s *Settings, getenv func(string) string, origins map[string]Origin) error {
	for _, e := range envVars {
		v := strings.TrimSpace(getenv(e.name))
		if v == "" {
			continue
		}
		if err := e.apply(s, v); err != nil {
			return fmt.Errorf("environment variable %s=%q: %v", e.name, v, err)
		}
		origins[e.key] = Origin{Source: "env", Env: e.name}
	}
	return nil
}

func setInt(dst *int, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return errors.New("want a whole number")
	}
	*dst = n
	return nil
}

func setDur(dst *Duration, v string) error {
	return dst.UnmarshalText([]byte(v))
}

// TimeoutFor returns the hard timeout for an agent type: the per-type
// setting if there is one, else the pool's.
func (p Pool) TimeoutFor(agent string) time.Duration {
	if d, ok := p.Timeouts[agent]; ok && d.Duration > 0 {
		return d.Duration
	}
	return p.Timeout.Duration
}
