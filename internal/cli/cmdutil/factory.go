// Package cmdutil is what every brood command shares: the Factory (the
// process's streams and environment, the project, the resolved settings and
// the agent registry), exit statuses, and small rendering helpers. Command
// packages (internal/cli/<noun>) take a *Factory; none reads the process
// environment or the working directory itself.
package cmdutil

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/broodhq/brood/internal/childexe"
	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/model/provider"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/telemetry"
	"github.com/broodhq/brood/internal/termsafe"
	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/trust"
)

// IO is the process's streams and environment, passed in so that tests can
// run the whole CLI in-process.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
}

// Factory is what every command needs: the IO, the working directory, the
// project root, the home directory, and the resolved settings. The root
// command fills it in (Load) before any command runs.
type Factory struct {
	IO
	Cwd         string
	ProjectRoot string // nearest ancestor with .git or .brood; Cwd if none
	Home        string
	Settings    settings.Settings
	Warnings    []string
	// Resolved is the settings with where each value came from.
	Resolved *settings.Resolved
	// Environ is the environment of the processes brood starts for its
	// agents (the root's tools, hooks, MCP servers, subagents): its own,
	// with a trusted settings env applied (SettingsEnv). brood's own
	// process environment is never changed.
	Environ []string
	// SettingsEnv is the settings env applied to Environ, and seen through
	// Getenv (the model client's ANTHROPIC_BASE_URL, keys, telemetry), as
	// Claude Code applies its settings env to its own process.
	SettingsEnv map[string]string
	// getenv is the IO's Getenv, under the settings env.
	getenv func(string) string
	// SettingsErr is why the settings could not be read, for a command
	// that runs without them (brood tasks, trust --list, doctor).
	SettingsErr error

	// importWarned are the refused @imports said already (one line each).
	importMu     sync.Mutex
	importWarned map[string]bool

	// OutTerminal says stdout is a terminal (the streams are wrapped, so
	// this is decided before).
	OutTerminal bool
	// ErrTerminal says stderr is a terminal: --output-format json shows
	// the subagents' progress there.
	ErrTerminal bool
	// Redactor scrubs this process's secrets (secret-looking variables,
	// the project's .env values, key formats) from everything it writes.
	Redactor *tool.Redactor
	// TrustProject (--trust-project) honours the project's configuration
	// for this run even if the user has not trusted it (settings/trust.go).
	TrustProject bool
	// Inherited is set in a subagent before Load: the project trust the
	// root decided, from the envelope (InheritedGrant), replaces this
	// process's own reading of the store, the flag and the environment.
	Inherited      bool
	InheritedGrant *trust.Grant
	// SessionAgents are the agents claude -p's --agents defined for this
	// run: Registry puts them above every file (registry.WithSession).
	SessionAgents []*registry.Definition
	// SettingSources are the kinds of settings file Load reads (user,
	// project, local: claude -p's --setting-sources); nil reads all.
	SettingSources []string
	// Links are the parts this binary links beyond the child protocol
	// (its main sets them: brood all, a lean child binary one SDK).
	Links Links
	// Args are the command line as the process was given it (after the
	// program name): what HandOffFleet hands to brood-fleet.
	Args []string

	mu       sync.Mutex
	regDiags []registry.Diagnostic
	mcp      *mcpspec.Config            // loaded once (MCPServers)
	rawOut   io.Writer                  // stdout as given: the interactive mode needs the terminal itself
	child    map[string]childexe.Choice // by lean binary name
	childMu  sync.Mutex                 // held while ChildChoice decides (it may run brood-child), apart from mu
}

// NewFactory wraps the process's streams: each write is made whole under one
// lock, since children's progress and [DISPATCH] lines come from many
// goroutines. Everything on stderr is for a person: no control sequence a
// child or a model wrote reaches the terminal (termsafe).
func NewFactory(stdio IO) *Factory {
	if stdio.Getenv == nil {
		stdio.Getenv = func(string) string { return "" }
	}
	raw, tty, errTTY := stdio.Out, IsTerminal(stdio.Out), IsTerminal(stdio.Err)
	stdio.Out, stdio.Err = &lockedWriter{w: stdio.Out}, &lockedWriter{w: termsafe.NewWriter(stdio.Err)}
	return &Factory{IO: stdio, rawOut: raw, OutTerminal: tty, ErrTerminal: errTTY}
}

type lockedWriter struct {
	mu    sync.Mutex
	w     io.Writer
	broke bool // a write found the reader gone (EPIPE)
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		l.broke = true
	}
	return n, err
}

// OutBroken says whether a write to stdout found its reader gone (brood ...
// | head): the command ends with ExitBrokenPipe, quietly, even when it
// did not look at the error of the write.
func (f *Factory) OutBroken() bool {
	l, ok := f.Out.(*lockedWriter)
	if !ok {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.broke
}

// Load fills in the directories and settings, and says each problem in a
// settings file on stderr (PrintWarnings).
func (f *Factory) Load() error {
	err := f.LoadQuiet()
	f.PrintWarnings()
	return err
}

// PrintWarnings says each problem in a settings file once, with its
// file:line.
func (f *Factory) PrintWarnings() {
	for _, w := range f.Warnings {
		fmt.Fprintln(f.Err, "brood: warning:", w)
	}
}

// LoadQuiet is Load without a word on stderr: the root command reads the
// settings before it knows whether brood-fleet runs the command instead
// (HandOffFleet), which would say them again.
func (f *Factory) LoadQuiet() error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	// The real path: an isolated child's copy is mounted over the real
	// directory, and records must land in the project, not in a copy seen
	// through a link (os.Getwd trusts $PWD, which may name the link).
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	f.Cwd = cwd
	f.ProjectRoot = taskdir.FindProjectRoot(cwd)
	f.Home = f.Getenv("HOME")
	f.Environ = os.Environ()
	r, err := settings.Resolve(settings.Sources{ProjectRoot: f.ProjectRoot, Home: f.Home, Getenv: f.Getenv,
		Trust: f.trustGate(), Gated: projectGated(f.ProjectRoot, f.Cwd, f.ownLocal(f.ProjectRoot)), Only: f.SettingSources,
		UserFile: f.Getenv(settings.EnvUserSettings), OwnLocal: f.ownLocal(f.ProjectRoot)})
	if err != nil {
		// What a command that needs no settings goes on with.
		f.Settings, f.Redactor, f.SettingsErr = settings.Defaults(), tool.NewProjectRedactor(os.Environ(), f.ProjectRoot), err
		return err
	}
	f.Settings, f.Resolved, f.Warnings = r.Settings, r, nil
	// Each problem in a settings file is said once, at start, with its
	// file:line.
	for _, w := range r.Warnings {
		f.Warnings = append(f.Warnings, w.String())
	}
	// A trusted .claude/settings.json's env is every process's brood starts
	// (tools, hooks, MCP servers, subagents), as Claude Code's: given to
	// them explicitly (Environ), never set in brood's own process; applied
	// before the redactor is made, so its secret-looking values are
	// redacted.
	f.applyEnv(".claude/settings.json", r.Settings.ClaudeEnv)
	return nil
}

// ApplyEnv applies a settings env (from the file named by source) to
// Environ and Getenv, but for the variables that would steer brood itself
// (steersBrood), each named in a warning; and remakes the redactor over
// the result.
func (f *Factory) ApplyEnv(source string, env map[string]string) {
	for _, w := range f.applyEnv(source, env) {
		fmt.Fprintln(f.Err, "brood: warning:", w)
	}
}

// applyEnv is ApplyEnv, its warnings added to Warnings and returned.
func (f *Factory) applyEnv(source string, env map[string]string) (warnings []string) {
	if f.getenv == nil {
		f.getenv = f.Getenv
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if why := steersBrood(k, source); why != "" || k == "" || strings.ContainsAny(k, "=\x00") {
			w := fmt.Sprintf("%s: env %s is not applied: %s", source, k, cmp.Or(why, "not a variable name"))
			f.Warnings = append(f.Warnings, w)
			warnings = append(warnings, w)
			continue
		}
		if f.SettingsEnv == nil {
			f.SettingsEnv = map[string]string{}
		}
		f.SettingsEnv[k] = env[k]
	}
	f.Environ = WithEnv(os.Environ(), f.SettingsEnv)
	if len(f.SettingsEnv) > 0 {
		base, over := f.getenv, f.SettingsEnv
		f.Getenv = func(k string) string {
			if v, ok := over[k]; ok {
				return v
			}
			return base(k)
		}
	}
	f.Redactor = tool.NewProjectRedactor(f.Environ, f.ProjectRoot)
	return warnings
}

// WithEnv is environ with the variables of over set (replacing any of the
// same name).
func WithEnv(environ []string, over map[string]string) []string {
	out := make([]string, 0, len(environ)+len(over))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := over[name]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(over)) {
		out = append(out, k+"="+over[k])
	}
	return out
}

// LoadDirs fills in the directories and the redactor, without reading any
// settings file: all a child needs until it delegates (Load then reads the
// settings as every command does).
func (f *Factory) LoadDirs() error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	// As Load: the real path, not a link to a copy.
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	f.Cwd = cwd
	f.ProjectRoot = taskdir.FindProjectRoot(cwd)
	f.Home = f.Getenv("HOME")
	f.Environ = os.Environ()
	// A child's: made at its first use, past its sandbox (a writer that
	// mounts first re-executes before it redacts anything).
	f.Redactor = tool.NewLazyProjectRedactor(f.Environ, f.ProjectRoot)
	return nil
}

// Registry loads the agent registry and keeps its diagnostics for
// RegistryErrors.
func (f *Factory) Registry() *registry.Registry {
	reg, diags := registry.Load(f.RegistryOptions())
	reg, shadow := reg.WithSession(f.SessionAgents)
	diags = append(diags, shadow...)
	f.mu.Lock()
	f.regDiags = diags
	f.mu.Unlock()
	return reg
}

// RegistryErrors are the diagnostics of the last Registry call that a run
// shows when it starts: the errors, a definition ignored for shadowing a
// built-in, a .md file with no frontmatter (registry.Diagnostic.AtStart).
func (f *Factory) RegistryErrors() []registry.Diagnostic {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []registry.Diagnostic
	for _, d := range f.regDiags {
		if d.AtStart() {
			out = append(out, d)
		}
	}
	return out
}

// RegistryOptions says where agent definitions live.
func (f *Factory) RegistryOptions() registry.Options {
	return registry.Options{ProjectRoot: f.ProjectRoot, Home: f.Home, Claude: f.Settings.Agents.ClaudeEnabled()}
}

// ChildExe is the binary a child that cannot delegate, on an Anthropic
// model, runs: brood-child beside brood when it is the same build, else
// brood itself (package childexe; BROOD_CHILD_EXE overrides it, for tests
// that re-exec their own binary).
func (f *Factory) ChildExe() string {
	exe, _ := f.ChildExeFor(&dispatch.Envelope{})
	return exe
}

// ChildExeFor is the binary the child of env runs. brood itself (this
// binary, which links everything) runs a child that may delegate
// (dispatch.Envelope.MayDelegate: its dispatcher needs Links.Delegation),
// every child while telemetry is on (the lean binaries and brood export
// nothing: this binary is then brood-fleet, HandOffTelemetry, and children
// run it, not brood beside it),
// every child on the scripted model (the lean binaries do not link it:
// its templates would keep every method of the SDKs in them) and every
// child whose envelope names MCP servers (nor the MCP SDK: 1.8 MB and a
// tenth of brood-child's package initialisers); the others run the lean binary of their model's wire API,
// brood-child or brood-child-openai, when it is the same build
// (ChildChoice). BROOD_CHILD_EXE overrides all of it. A child that runs
// brood is told which lean binaries this process has proven the same build
// (childexe.EnvVerified: the one for its own model's API is decided now),
// so that it does not prove them again for its own children.
func (f *Factory) ChildExeFor(env *dispatch.Envelope) (exe string, extraEnv []string) {
	if v := f.Getenv("BROOD_CHILD_EXE"); v != "" {
		return v, nil
	}
	api, _ := provider.API(env.Model) // an invalid spec fails in any child
	name := childexe.ForAPI(api)
	if tel := f.telemetryOn(); needsBrood(env, api, tel) {
		if self, err := os.Executable(); err == nil {
			f.ChildChoice(name)
			self = delegator(self, tel, f.ChildChoice)
			return self, f.verifiedEnv(self)
		}
	}
	return f.ChildChoice(name).Path, nil
}

// needsBrood says whether the child of env, on the wire API api, needs
// what only brood links: delegation, telemetry export, the scripted model,
// an MCP client.
func needsBrood(env *dispatch.Envelope, api string, telemetryOn bool) bool {
	return env.MayDelegate() || telemetryOn || api == provider.APIScript || len(env.MCP) > 0
}

// delegator is the binary a child that may delegate runs: self, or, when
// self is brood-fleet (a worker), brood beside it if choose proves it the
// same build: a child never opens the fleet, and brood starts without the
// fleet's package initialisers. With telemetry on it is self: brood-fleet
// exports (brood hands it agent runs then: HandOffTelemetry), brood does
// not.
func delegator(self string, telemetryOn bool, choose func(name string) childexe.Choice) string {
	if telemetryOn || filepath.Base(self) != childexe.NameFleet {
		return self
	}
	if c := choose(childexe.NameBrood); c.Lean {
		return c.Path
	}
	return self
}

// verifiedEnv is childexe.EnvVerified for a child running self: the lean
// binaries decided so far that were proven its build.
func (f *Factory) verifiedEnv(self string) []string {
	f.childMu.Lock()
	defer f.childMu.Unlock()
	var lean []string
	for _, c := range f.child {
		if c.Lean && c.Path != self {
			lean = append(lean, c.Path)
		}
	}
	if len(lean) == 0 {
		return nil
	}
	slices.Sort(lean)
	return []string{childexe.EnvVerified + "=" + childexe.EncodeVerified(self, lean)}
}

func (f *Factory) telemetryOn() bool {
	c, err := telemetry.FromEnv(f.Getenv)
	return err == nil && (c.Traces || c.Metrics)
}

// WarmChildExe returns the function a dispatcher calls at each spawn to
// learn which binary a child runs. The choice of a lean binary is made at
// the first spawn that needs it, not before: it may run the binary once to
// compare source digests, which a session that never delegates should not
// pay for.
func (f *Factory) WarmChildExe() func(*dispatch.Envelope) (string, []string) {
	return f.ChildExeFor
}

// ChildChoice is whether children run the lean binary called name
// (childexe.Name, childexe.NameOpenAI) or, if not, brood, and why. It is
// decided once per process and name.
func (f *Factory) ChildChoice(name string) childexe.Choice {
	f.childMu.Lock()
	defer f.childMu.Unlock()
	if c, ok := f.child[name]; ok {
		return c
	}
	var c childexe.Choice
	if exe, err := os.Executable(); err != nil {
		c = childexe.Choice{Path: "brood", Why: "cannot find this binary: " + err.Error()}
	} else if lean, ok := childexe.Inherited(f.Getenv(childexe.EnvVerified), exe, name); ok {
		c = childexe.Choice{Path: lean, Lean: true} // proven by the parent (childexe.EnvVerified)
	} else {
		c = childexe.FindNamed(exe, name)
	}
	if f.child == nil {
		f.child = map[string]childexe.Choice{}
	}
	f.child[name] = c
	return c
}

// ChildArgs are extra leading arguments for re-executing brood (used by
// tests that re-exec their own binary).
func (f *Factory) ChildArgs() []string {
	if v := f.Getenv("BROOD_CHILD_ARGS"); v != "" {
		return []string{v}
	}
	return nil
}

// Depth is this process's depth and the tree-wide cap. A root (no brood
// child in its ancestry or cgroup) takes the cap from its settings and
// ignores the depth stamps in its environment; below a child, the markers
// its parents set decide (package depth).
func (f *Factory) Depth() (int, int) {
	d := depth.Current(f.Settings.MaxSubagentDepth, f.Getenv)
	return d.Depth, d.Max
}
