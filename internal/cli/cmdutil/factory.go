// Package cmdutil is what every brood command shares: the Factory (the
// process's streams and environment, the project, the resolved settings and
// the agent registry), exit statuses, and small rendering helpers. Command
// packages (internal/cli/<noun>) take a *Factory; none reads the process
// environment or the working directory itself.
package cmdutil

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/broodhq/brood/internal/childexe"
	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/taskdir"
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
	// OutTerminal says stdout is a terminal (the streams are wrapped, so
	// this is decided before).
	OutTerminal bool
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
	// Extras are what brood's dispatchers get beyond the child protocol
	// (the schema validator, the Workflow tool): brood's main sets them,
	// brood-child has none (delegate.Extras).
	Extras delegate.Extras

	mu       sync.Mutex
	regDiags []registry.Diagnostic
	mcp      *mcpspec.Config // loaded once (MCPServers)
	rawOut   io.Writer       // stdout as given: the interactive mode needs the terminal itself
	child    *childexe.Choice
	childMu  sync.Mutex // held while ChildChoice decides (it may run brood-child), apart from mu
}

// NewFactory wraps the process's streams: each write is made whole under one
// lock, since children's progress and [DISPATCH] lines come from many
// goroutines. Everything on stderr is for a person: no control sequence a
// child or a model wrote reaches the terminal (termsafe).
func NewFactory(stdio IO) *Factory {
	if stdio.Getenv == nil {
		stdio.Getenv = func(string) string { return "" }
	}
	raw, tty := stdio.Out, IsTerminal(stdio.Out)
	stdio.Out, stdio.Err = &lockedWriter{w: stdio.Out}, &lockedWriter{w: termsafe.NewWriter(stdio.Err)}
	return &Factory{IO: stdio, rawOut: raw, OutTerminal: tty}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Load fills in the directories and settings. It runs before every command.
func (f *Factory) Load() error {
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
	f.ProjectRoot = FindProjectRoot(cwd)
	f.Home = f.Getenv("HOME")
	r, err := settings.Resolve(settings.Sources{ProjectRoot: f.ProjectRoot, Home: f.Home, Getenv: f.Getenv,
		Trust: f.trustGate(), Gated: projectGated(f.ProjectRoot)})
	if err != nil {
		return err
	}
	f.Settings, f.Resolved, f.Warnings = r.Settings, r, nil
	// Each problem in a settings file is said once, at start, with its
	// file:line.
	for _, w := range r.Warnings {
		f.Warnings = append(f.Warnings, w.String())
		fmt.Fprintln(f.Err, "brood: warning:", w.String())
	}
	f.Redactor = tool.NewProjectRedactor(os.Environ(), f.ProjectRoot)
	return nil
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
	f.ProjectRoot = FindProjectRoot(cwd)
	f.Home = f.Getenv("HOME")
	f.Redactor = tool.NewProjectRedactor(os.Environ(), f.ProjectRoot)
	return nil
}

// FindProjectRoot returns the nearest ancestor of dir holding .git or
// .brood, or dir itself when there is none.
func FindProjectRoot(dir string) string {
	for d := dir; ; {
		for _, marker := range []string{".git", taskdir.StateDirName} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// Registry loads the agent registry and keeps its diagnostics for
// RegistryErrors.
func (f *Factory) Registry() *registry.Registry {
	reg, diags := registry.Load(f.RegistryOptions())
	f.mu.Lock()
	f.regDiags = diags
	f.mu.Unlock()
	return reg
}

// RegistryErrors are the error diagnostics of the last Registry call.
func (f *Factory) RegistryErrors() []registry.Diagnostic {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []registry.Diagnostic
	for _, d := range f.regDiags {
		if d.Severity == registry.SeverityError {
			out = append(out, d)
		}
	}
	return out
}

// RegistryOptions says where agent definitions live.
func (f *Factory) RegistryOptions() registry.Options {
	return registry.Options{ProjectRoot: f.ProjectRoot, Home: f.Home, Claude: f.Settings.Agents.ClaudeEnabled()}
}

// ChildExe is the binary children that cannot delegate run: brood-child
// beside brood when it is the same build, else brood itself (package
// childexe; BROOD_CHILD_EXE overrides it, for tests that re-exec their own
// binary).
func (f *Factory) ChildExe() string { return f.ChildExeFor(false) }

// ChildExeFor is the binary a child runs: one that may delegate
// (dispatch.Envelope.MayDelegate) runs brood, this binary, whose
// dispatchers have Extras; one that cannot runs ChildChoice's, brood-child
// when it is the same build. BROOD_CHILD_EXE overrides both.
func (f *Factory) ChildExeFor(delegates bool) string {
	if v := f.Getenv("BROOD_CHILD_EXE"); v != "" {
		return v
	}
	if delegates {
		if exe, err := os.Executable(); err == nil {
			return exe
		}
	}
	return f.ChildChoice().Path
}

// WarmChildExe returns the function a dispatcher calls at each spawn to
// learn which binary a child runs. The choice is made at the first spawn of
// a child that cannot delegate, not before: it may run brood-child once to
// compare source digests, which a session that never delegates should not
// pay for.
func (f *Factory) WarmChildExe() func(delegates bool) string {
	return f.ChildExeFor
}

// ChildChoice is which binary children run and, if not brood-child, why.
// It is decided once per process.
func (f *Factory) ChildChoice() childexe.Choice {
	f.childMu.Lock()
	defer f.childMu.Unlock()
	if f.child == nil {
		exe, err := os.Executable()
		if err != nil {
			c := childexe.Choice{Path: "brood", Why: "cannot find this binary: " + err.Error()}
			f.child = &c
		} else {
			c := childexe.Find(exe)
			f.child = &c
		}
	}
	return *f.child
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
