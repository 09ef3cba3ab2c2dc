package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/trust"
)

// EnvTrustProject, set to 1, trusts the project's configuration for one run
// (CI), as --trust-project does.
const EnvTrustProject = "BROOD_TRUST_PROJECT"

// TrustStore answers whether the user trusts a project in a given state
// (trust.Store is one).
type TrustStore interface {
	Trusted(root, hash string) bool
}

// Trust configures the project gate (Sources.Trust).
type Trust struct {
	// Store holds the user's grants; nil trusts no project.
	Store TrustStore
	// Force trusts the project for this run (--trust-project).
	Force bool
	// Inherited: this process is a subagent, and Grant is the root's
	// decision as it came down in the envelope. Store, Force and the
	// environment are then never asked (a sibling could have written the
	// store, and a child's environment is its parent's to set): a file is
	// trusted when the grant covers it as it is now.
	Inherited bool
	Grant     *trust.Grant
}

// ProjectTrust is what the gate found in one Load: which project files
// allow more than brood's defaults (and the user's own files), and whether
// they are honoured.
type ProjectTrust struct {
	Root string
	// Files are every project settings file read, with their content: what
	// a grant is keyed to (Hash).
	Files []trust.File
	// Widening lists, in words, what the project files allow beyond the
	// layers below them; empty when they only narrow (or are absent).
	Widening []string
	// Hash keys the grant: trust.Hash(Files).
	Hash string
	// Trusted is true when the widening parts are honoured (a grant for
	// this hash, --trust-project or BROOD_TRUST_PROJECT=1).
	Trusted bool
	// Forced is true when the trust came from the flag or the environment.
	Forced bool
	// HeldAllow are the project files' allow rules held back (Gated),
	// each with the file that has it.
	HeldAllow []trust.HeldRule
	// Own are the project's local files honoured as the person's own
	// (PersonalNeedsTrust): outside the gate and the grant's key. The
	// root passes their content's hashes down (trust.Grant.Own).
	Own []trust.File
}

// Gated reports whether widening parts were set back to the defaults.
func (t ProjectTrust) Gated() bool { return len(t.Widening) > 0 && !t.Trusted }

// FileNames are the project-relative names of Files.
func (t ProjectTrust) FileNames() []string {
	out := make([]string, len(t.Files))
	for i, f := range t.Files {
		out[i] = f.Rel
	}
	return out
}

// Notice is the one line a run prints when the gate held something back
// ("" when nothing was).
func (t ProjectTrust) Notice() string {
	if !t.Gated() {
		return ""
	}
	verb := "allows"
	if len(t.Files) > 1 {
		verb = "allow"
	}
	var local []string
	for _, f := range t.FileNames() {
		if IsLocalFile(f) {
			local = append(local, f)
		}
	}
	why := ""
	if len(local) > 0 {
		// The person may take it for theirs: say why it is not.
		why = fmt.Sprintf(" (%s: a local file is yours without trust only as brood wrote it, or in a folder Claude Code trusts)", strings.Join(local, ", "))
	}
	return fmt.Sprintf("brood: %s %s more than the defaults (%s); not applied: this run uses the defaults for those until you trust the project with `brood trust` (or --trust-project, %s=1, for one run)%s",
		strings.Join(t.FileNames(), ", "), verb, strings.Join(t.Widening, "; "), EnvTrustProject, why)
}

// Modes are the permission modes brood implements, as Claude Code writes
// them (tool.ParseMode reads them).
func Modes() []string {
	return []string{"default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"}
}

// modeRank orders permission modes from the least to the most allowing:
// plan runs nothing but reads, dontAsk is default with every ask denied.
func modeRank(m string) int {
	switch m {
	case "plan":
		return 0
	case "dontAsk":
		return 1
	case "", "default":
		return 2
	case "acceptEdits":
		return 3
	}
	return 4 // bypassPermissions, or anything unknown: treat as widest
}

// clone deep-copies every slice, map and pointer of s, so that a decode
// into the copy (which writes into the slices' backing arrays, the maps and
// through the pointers it finds) or a change to it never reaches s. A new
// reference-typed setting belongs here (TestCloneOwnsEverything checks).
func (s Settings) clone() Settings {
	s.ClaudeEnv = maps.Clone(s.ClaudeEnv)
	s.TestCommands = slices.Clone(s.TestCommands)
	s.Permissions.Allow = slices.Clone(s.Permissions.Allow)
	s.Permissions.Deny = slices.Clone(s.Permissions.Deny)
	s.Permissions.Ask = slices.Clone(s.Permissions.Ask)
	s.Permissions.AdditionalDirectories = slices.Clone(s.Permissions.AdditionalDirectories)
	s.Permissions.AskFrom = slices.Clone(s.Permissions.AskFrom)
	if s.Agents.Claude != nil {
		c := *s.Agents.Claude
		s.Agents.Claude = &c
	}
	s.Pool.Timeouts = maps.Clone(s.Pool.Timeouts)
	s.Sandbox.Hide = slices.Clone(s.Sandbox.Hide)
	s.Worker.Remotes = slices.Clone(s.Worker.Remotes)
	s.Trust.Files = slices.Clone(s.Trust.Files)
	s.Trust.Widening = slices.Clone(s.Trust.Widening)
	s.Trust.HeldAllow = slices.Clone(s.Trust.HeldAllow)
	s.Trust.Own = slices.Clone(s.Trust.Own)
	return s
}

// restrict compares full (with the project layers) to base (without them),
// and returns what the project layers widen, in words, and full with every
// widening part set back to base. Narrowing (deny and ask rules, lower
// limits, a stricter mode) is always kept. A new widening setting belongs
// here.
func restrict(base, full Settings) (Settings, []string, []string) {
	out := full.clone()
	var why, keys []string
	if modeRank(full.Permissions.Mode) > modeRank(base.Permissions.Mode) {
		name := "permissions.mode" // brood's key; Claude Code's file says defaultMode
		if full.modeClaude {
			name = "permissions.defaultMode"
		}
		why, keys = append(why, name+" "+full.Permissions.Mode), append(keys, "permissions.mode")
		out.Permissions.Mode, out.modeClaude = base.Permissions.Mode, base.modeClaude
	}
	if added := slices.DeleteFunc(slices.Clone(full.Permissions.Allow), func(r string) bool { return slices.Contains(base.Permissions.Allow, r) }); len(added) > 0 {
		why, keys = append(why, "permissions.allow "+strings.Join(added, ", ")), append(keys, "permissions.allow")
		out.Permissions.Allow = slices.Clone(base.Permissions.Allow)
	}
	if added := slices.DeleteFunc(slices.Clone(full.Permissions.AdditionalDirectories), func(d string) bool {
		return slices.Contains(base.Permissions.AdditionalDirectories, d)
	}); len(added) > 0 {
		// Edits there are allowed under acceptEdits, as in the project.
		why = append(why, "permissions.additionalDirectories "+strings.Join(added, ", ")+" (the agent would work outside the project)")
		out.Permissions.AdditionalDirectories = slices.Clone(base.Permissions.AdditionalDirectories)
	}
	var envSet []string
	for k, v := range full.ClaudeEnv {
		if b, ok := base.ClaudeEnv[k]; !ok || b != v {
			envSet = append(envSet, k)
		}
	}
	if len(envSet) > 0 {
		// The names only: a value may be a secret.
		slices.Sort(envSet)
		why = append(why, envNotice(envSet))
		out.ClaudeEnv = maps.Clone(base.ClaudeEnv)
	}
	for _, l := range []struct {
		name       string
		full, base int64
		reset      func()
	}{
		{"maxSubagentDepth", int64(full.MaxSubagentDepth), int64(base.MaxSubagentDepth), func() { out.MaxSubagentDepth = base.MaxSubagentDepth }},
		{"max_turns", int64(full.MaxTurns), int64(base.MaxTurns), func() { out.MaxTurns = base.MaxTurns }},
		{"pool.concurrency", int64(full.Pool.Concurrency), int64(base.Pool.Concurrency), func() { out.Pool.Concurrency = base.Pool.Concurrency }},
		{"pool.nested_concurrency", int64(full.Pool.NestedConcurrency), int64(base.Pool.NestedConcurrency), func() { out.Pool.NestedConcurrency = base.Pool.NestedConcurrency }},
		{"pool.warm", int64(full.Pool.Warm), int64(base.Pool.Warm), func() { out.Pool.Warm = base.Pool.Warm }},
		{"pool.timeout", int64(full.Pool.Timeout.Duration), int64(base.Pool.Timeout.Duration), func() { out.Pool.Timeout = base.Pool.Timeout }},
		{"pool.heartbeat_timeout", int64(full.Pool.HeartbeatTimeout.Duration), int64(base.Pool.HeartbeatTimeout.Duration), func() { out.Pool.HeartbeatTimeout = base.Pool.HeartbeatTimeout }},
		{"pool.kill_grace", int64(full.Pool.KillGrace.Duration), int64(base.Pool.KillGrace.Duration), func() { out.Pool.KillGrace = base.Pool.KillGrace }},
		{"bash.timeout", int64(full.Bash.Timeout.Duration), int64(base.Bash.Timeout.Duration), func() { out.Bash.Timeout = base.Bash.Timeout }},
		// What a run spends: tokens per call, retries, bytes put in the
		// model's context (redteam P2-4).
		{"max_tokens", int64(full.MaxTokens), int64(base.MaxTokens), func() { out.MaxTokens = base.MaxTokens }},
		{"fix_attempts", int64(full.FixAttempts), int64(base.FixAttempts), func() { out.FixAttempts = base.FixAttempts }},
		{"bash.output_limit", int64(full.Bash.OutputLimit), int64(base.Bash.OutputLimit), func() { out.Bash.OutputLimit = base.Bash.OutputLimit }},
		{"results.inline_limit", int64(full.Results.InlineLimit), int64(base.Results.InlineLimit), func() { out.Results.InlineLimit = base.Results.InlineLimit }},
		{"project_files.max_bytes", int64(full.ProjectFiles.MaxBytes), int64(base.ProjectFiles.MaxBytes), func() { out.ProjectFiles.MaxBytes = base.ProjectFiles.MaxBytes }},
		{"project_files.child_max_bytes", int64(full.ProjectFiles.ChildMaxBytes), int64(base.ProjectFiles.ChildMaxBytes), func() { out.ProjectFiles.ChildMaxBytes = base.ProjectFiles.ChildMaxBytes }},
		{"effort", effortRank(full.Effort), effortRank(base.Effort), func() { out.Effort = base.Effort }},
		{"project_files.children", childrenRank(full.ProjectFiles.Children), childrenRank(base.ProjectFiles.Children), func() { out.ProjectFiles.Children = base.ProjectFiles.Children }},
	} {
		if l.full > l.base {
			why, keys = append(why, fmt.Sprintf("%s %s", l.name, limitText(l.name, l.full, full))), append(keys, l.name)
			l.reset()
		}
	}
	for _, agent := range slices.Sorted(maps.Keys(full.Pool.Timeouts)) {
		d := full.Pool.Timeouts[agent]
		if prev, ok := base.Pool.Timeouts[agent]; (ok && d.Duration > prev.Duration) || (!ok && d.Duration > base.Pool.Timeout.Duration) {
			why, keys = append(why, fmt.Sprintf("pool.timeouts.%s %s", agent, d.Duration)), append(keys, "pool.timeouts."+agent)
			if ok {
				out.Pool.Timeouts[agent] = prev
			} else {
				delete(out.Pool.Timeouts, agent)
			}
		}
	}
	if added := addedTests(base.TestCommands, full.TestCommands); len(added) > 0 {
		why, keys = append(why, "test_commands "+strings.Join(added, ", ")+" (the evidence guardrail would take a run of them for a test run)"), append(keys, "test_commands")
		out.TestCommands = slices.Clone(base.TestCommands)
	}
	w, k := restrictGuardrails(&out.Guardrails, base.Guardrails)
	why, keys = append(why, w...), append(keys, k...)
	if w, k := raisedLimits(base, full, &out); len(w) > 0 {
		why, keys = append(why, w...), append(keys, k...)
	}
	if full.Model != base.Model {
		// A project's model choice is what the run costs and which of
		// your providers (their keys and endpoints are yours: a project's
		// env waits too) gets your code; a script is a program of the
		// repository's, which decides every tool call.
		why, keys = append(why, modelWhy(full)), append(keys, "model")
		out.Model, out.modelClaude = base.Model, base.modelClaude
	}
	if full.Agents.AllowConfigChanges && !base.Agents.AllowConfigChanges {
		why, keys = append(why, "agents.allow_config_changes (subagents may change .brood/ and .claude/)"), append(keys, "agents.allow_config_changes")
		out.Agents.AllowConfigChanges = false
	}
	if w, k := restrictLoosened(base, full, &out); len(w) > 0 {
		why, keys = append(why, w...), append(keys, k...)
	}
	if w, k := restrictConfinement(base, full, &out); len(w) > 0 {
		why, keys = append(why, w...), append(keys, k...)
	}
	if !slices.Equal(full.Worker.Remotes, base.Worker.Remotes) {
		// A worker fetches from these with its own credentials.
		why, keys = append(why, "worker.remotes (a fleet worker would fetch from them)"), append(keys, "worker.remotes")
		out.Worker.Remotes = slices.Clone(base.Worker.Remotes)
	}
	if w, k := restrictTemporal(base, full, &out); w != "" {
		why, keys = append(why, w), append(keys, k)
	}
	if full.Store != base.Store {
		// The store receives the code, transcripts and patches of fleet runs.
		why, keys = append(why, "store "+full.Store+" (fleet runs would send your code and transcripts there)"), append(keys, "store")
		out.Store = base.Store
	}
	return out, why, keys
}

// restrictConfinement sets out's confinement of children back to base's
// where the project layers loosen it: how their processes are held, the
// kernel sandbox, and whether an unconfinable child may run.
func restrictConfinement(base, full Settings, out *Settings) (why, keys []string) {
	if full.Pool.Containment != base.Pool.Containment {
		// pidns gives up the cgroup: its memory and process limits, and
		// the kill of a whole tree by its cgroup.
		why, keys = append(why, "pool.containment "+full.Pool.Containment+" (how children are held: without a cgroup their memory and process limits are weaker)"), append(keys, "pool.containment")
		out.Pool.Containment = base.Pool.Containment
	}
	if full.Isolation.NoLandlock && !base.Isolation.NoLandlock {
		why, keys = append(why, "isolation.no_landlock (the kernel sandbox off)"), append(keys, "isolation.no_landlock")
		out.Isolation.NoLandlock = false
	}
	if base.Sandbox.Require && !full.Sandbox.Require {
		why, keys = append(why, "sandbox.require = false (children the kernel cannot confine would run)"), append(keys, "sandbox.require")
		out.Sandbox.Require = true
	}
	return why, keys
}

// ScriptModel reports whether a model spec names a script file
// (`script:<file>`): a program, not a model, so a repository's choice of
// it waits for trust (the built-in `script` demo is no file of anyone's).
func ScriptModel(spec string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(spec)), "script:")
}

// userOnly is full with the settings only the user's own files set
// (trusted or not, a repository never does) taken from base: the paths
// hidden from children (sandbox.hide), unix sockets for their tools
// (sandbox.unix_sockets).
func userOnly(base, full Settings) Settings {
	full.Sandbox.Hide = slices.Clone(base.Sandbox.Hide)
	full.Sandbox.UnixSockets = base.Sandbox.UnixSockets
	return full
}

// restrictTemporal sets out's fleet connection (temporal.*: address,
// namespace, task queue, TLS, the API key's variable) back to base's when
// the project layers change it: brood would dial that server and send it
// the named variable's value as its bearer token (brood tasks lists a
// configured fleet's calls in any repository). attempts, a limit, is kept.
func restrictTemporal(base, full Settings, out *Settings) (why, key string) {
	bt, ft := base.Temporal, full.Temporal
	bt.Attempts, ft.Attempts = 0, 0
	if bt == ft {
		return "", ""
	}
	attempts := out.Temporal.Attempts
	out.Temporal = base.Temporal
	out.Temporal.Attempts = attempts
	return "temporal (the fleet's address, TLS and API key variable: brood would connect there and send that key)", "temporal"
}

// restrictGuardrails sets back every guardrail out turns to warn where base
// rejects: it would let a child's unbacked or out-of-scope result through.
func restrictGuardrails(out *Guardrails, base Guardrails) (why, keys []string) {
	b := base.fields()
	for i, g := range out.fields() {
		if *g.v == "warn" && *b[i].v != "warn" {
			why, keys = append(why, g.key+" warn (results it would reject are accepted)"), append(keys, g.key)
			*g.v = *b[i].v
		}
	}
	return why, keys
}

func limitText(name string, v int64, full Settings) string {
	switch name {
	case "effort":
		return full.Effort
	case "project_files.children":
		return full.ProjectFiles.Children
	}
	if strings.HasSuffix(name, "timeout") || strings.HasSuffix(name, "grace") {
		return time.Duration(v).String()
	}
	return fmt.Sprint(v)
}

// GatedFile is a project file outside the settings files that the project
// grant covers: .mcp.json, an agent file that starts MCP servers, a
// settings file's hooks. Its content is part of the grant's key; Widening
// says, in words, what it allows (the notice names it). Whether it is
// honoured is its reader's to ask (ProjectTrust.Covers).
type GatedFile struct {
	File     trust.File
	Widening []string
	// Agent, for a project agent file, are the limits it asks for its
	// child: a widening where they raise base's (the file is left out of
	// the key when nothing else of it widens either).
	Agent *AgentAsks
}

// GateProject decides how much of the project layers a run honours: full
// is the settings with them, base without them (defaults and the user's
// files). What the project files widen is honoured only when the user
// trusts the project in its current state (files, keyed by content), or t
// forces it; otherwise it is set back to base and the returned
// ProjectTrust says so (Notice).
func GateProject(root string, base, full Settings, files []trust.File, t Trust) (Settings, ProjectTrust) {
	s, pt, _ := gate(root, base, full, files, nil, t)
	return s, pt
}

// gate is GateProject with the other gated files, returning also the
// settings keys it held back.
func gate(root string, base, full Settings, files []trust.File, extra []GatedFile, t Trust) (Settings, ProjectTrust, []string) {
	full = userOnly(base, full)
	restricted, why, keys := restrict(base, full)
	why = append(why, projectPrices(files)...)
	for _, g := range extra {
		w := g.Widening
		if g.Agent != nil {
			if w = append(slices.Clone(w), g.Agent.beyond(base, g.File.Rel)...); len(w) == 0 {
				continue
			}
		}
		if !slices.ContainsFunc(files, func(f trust.File) bool { return f.Rel == g.File.Rel }) {
			files = append(files, g.File)
		}
		why = append(why, w...)
	}
	if t.Inherited {
		t.Force = t.Grant != nil && t.Grant.All
	}
	if len(files) == 0 {
		return full, ProjectTrust{Trusted: t.Force, Forced: t.Force}, nil
	}
	pt := ProjectTrust{Root: trust.Key(root), Files: files, Widening: why}
	if len(why) == 0 {
		pt.Trusted = true
		return full, pt, nil
	}
	pt.Hash = trust.Hash(files)
	switch {
	case t.Force:
		pt.Trusted, pt.Forced = true, true
	case t.Inherited:
		pt.Trusted = t.Grant.Covers(files)
	case t.Store != nil && root != "":
		pt.Trusted = t.Store.Trusted(pt.Root, pt.Hash)
	}
	if pt.Trusted {
		return full, pt, nil
	}
	return restricted, pt, keys
}

// Covers reports whether the project file rel (project-relative) is
// honoured as the user trusted it: the run trusts the project and the file
// is one the grant covers, with the content it had then — or the trust is
// forced for this run. A file the gate never saw is not covered.
func (t ProjectTrust) Covers(rel string, data []byte) bool {
	if t.Forced {
		return true
	}
	if !t.Trusted {
		return false
	}
	rel = filepath.ToSlash(rel)
	return slices.ContainsFunc(t.Files, func(f trust.File) bool { return f.Rel == rel && bytes.Equal(f.Data, data) })
}

// ReadProjectFile reads a project settings file for the gate; ok is false
// when it does not exist.
func ReadProjectFile(root, rel string) (trust.File, bool, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return trust.File{}, false, nil
	}
	if err != nil {
		return trust.File{}, false, fmt.Errorf("settings: %w", err)
	}
	return trust.File{Rel: rel, Data: data}, true, nil
}
