// Package hooks runs Claude Code–compatible command hooks: the user's
// commands that brood starts at SessionStart, UserPromptSubmit, PreToolUse,
// PostToolUse, SubagentStart, SubagentStop and Stop, with Claude Code's JSON
// on their stdin, read back as Claude Code reads them (exit 2 blocks with
// stderr for the model; JSON hookSpecificOutput with a permission decision,
// an updated input or additional context).
//
// Hooks come from settings (the [hooks] table of .brood/settings.toml and
// the "hooks" object of .claude/settings.json, both in Claude Code's
// structure). A project's own files only count once the user trusts the
// project. Every hook runs in the root brood process the user started, with
// the user's privileges, also for a subagent's events: a child process never
// reads hook configuration, so it cannot add or change hooks.
package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/trust"
)

// Event names, as Claude Code spells them.
const (
	SessionStart     = "SessionStart"
	UserPromptSubmit = "UserPromptSubmit"
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	SubagentStart    = "SubagentStart"
	SubagentStop     = "SubagentStop"
	Stop             = "Stop"
)

// Events returns the events brood fires, in Claude Code's spelling.
func Events() []string {
	return []string{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, SubagentStart, SubagentStop, Stop}
}

// DefaultTimeout bounds one hook command when its definition names none
// (Claude Code's default).
const DefaultTimeout = 60 * time.Second

// Config is the hooks of every event: event name → matcher groups.
type Config map[string][]Group

// Group is one matcher and the commands it runs.
type Group struct {
	// Matcher selects by tool name (PreToolUse, PostToolUse), agent type
	// (SubagentStart, SubagentStop) or source (SessionStart): empty or "*"
	// matches everything, letters/digits/_ and | are exact names, anything
	// else is a regular expression.
	Matcher string    `json:"matcher,omitempty" toml:"matcher"`
	Hooks   []Command `json:"hooks" toml:"hooks"`
	// Source is the settings file the group came from (for messages).
	Source string `json:"-" toml:"-"`
}

// Command is one hook.
type Command struct {
	Type    string `json:"type" toml:"type"` // "command"
	Command string `json:"command" toml:"command"`
	// Timeout in seconds (0: DefaultTimeout).
	Timeout float64 `json:"timeout,omitempty" toml:"timeout"`
	// pins are the project files the command names, as they were when the
	// hooks were loaded (and, for a project's hook, trusted): a hook whose
	// file changed since does not run (Runner.Fire).
	pins []trust.Pin
}

func (c Command) timeout() time.Duration {
	if c.Timeout > 0 {
		return time.Duration(c.Timeout * float64(time.Second))
	}
	return DefaultTimeout
}

// Empty reports whether no hook is configured at all.
func (c Config) Empty() bool {
	for _, gs := range c {
		for _, g := range gs {
			if len(g.Hooks) > 0 {
				return false
			}
		}
	}
	return true
}

// Has reports whether any hook is configured for event.
func (c Config) Has(event string) bool {
	for _, g := range c[event] {
		if len(g.Hooks) > 0 {
			return true
		}
	}
	return false
}

// validate checks names, types and matchers, naming the file.
func (c Config) validate(path string) error {
	for ev, gs := range c {
		if !slices.Contains(Events(), ev) {
			if claudeOnly(ev) {
				continue // Claude Code events brood does not fire: kept, ignored
			}
			return fmt.Errorf("%s: hooks: unknown event %q; brood fires %s", path, ev, strings.Join(Events(), ", "))
		}
		for i, g := range gs {
			if isRegexMatcher(g.Matcher) {
				if _, err := regexp.Compile(g.Matcher); err != nil {
					return fmt.Errorf("%s: hooks.%s[%d].matcher %q is not a valid regular expression: %v", path, ev, i, g.Matcher, err)
				}
			}
			for j, h := range g.Hooks {
				if h.Type != "command" {
					return fmt.Errorf("%s: hooks.%s[%d].hooks[%d].type %q: brood runs only type \"command\" hooks", path, ev, i, j, h.Type)
				}
				if strings.TrimSpace(h.Command) == "" {
					return fmt.Errorf("%s: hooks.%s[%d].hooks[%d] has no command", path, ev, i, j)
				}
				if h.Timeout < 0 {
					return fmt.Errorf("%s: hooks.%s[%d].hooks[%d].timeout must be a positive number of seconds", path, ev, i, j)
				}
			}
		}
	}
	return nil
}

// claudeOnly reports Claude Code events that brood does not fire; a
// settings file shared with Claude Code may name them.
func claudeOnly(ev string) bool {
	switch ev {
	case "Notification", "PreCompact", "SessionEnd", "PermissionRequest", "PostToolUseFailure":
		return true
	}
	return false
}

// ParseJSON reads the "hooks" object of a Claude Code settings.json.
func ParseJSON(path string, data []byte) (Config, error) {
	var doc struct {
		Hooks Config `json:"hooks"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, settings.JSONError(path, data, err)
	}
	return doc.Hooks, doc.Hooks.validate(path)
}

// ParseTOML reads the [hooks] table of a brood settings.toml.
func ParseTOML(path string, data []byte) (Config, error) {
	var doc struct {
		Hooks Config `toml:"hooks"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s:%d: %s (fix the file or move it aside)", path, pe.Position.Line, pe.Message)
		}
		return nil, fmt.Errorf("%s: hooks: %v", path, err)
	}
	return doc.Hooks, doc.Hooks.validate(path)
}

// Sources says where hooks are read from.
type Sources struct {
	Home        string // "" = no user files
	ProjectRoot string // "" = no project files
	// Dir is where the hooks run (Options.Dir; "" = ProjectRoot): what a
	// command's relative paths are resolved against.
	Dir string
	// Trusted reports whether the project's own settings files, and the
	// project files their hooks run, may take effect (the user's one-time
	// trust, keyed to their content). Nil trusts nothing: only the user's
	// files count.
	Trusted func(projectRoot string, files []string) bool
	// TrustedRuns reports whether the project files that the hooks of one
	// project settings file run may run, as they were pinned: the file is
	// the person's own (what it runs is theirs too), or the grant covers
	// each with the pinned content. Nil asks Trusted about the files.
	TrustedRuns func(projectRoot, file string, pins []trust.Pin) bool
	// Only are the kinds of settings file read (--setting-sources); nil
	// reads every one.
	Only []string
}

// runsTrusted asks TrustedRuns (or Trusted) about the files the hooks of
// the project settings file run, as pinned.
func (s Sources) runsTrusted(file string, pins []trust.Pin) bool {
	switch {
	case s.TrustedRuns != nil:
		return s.TrustedRuns(s.ProjectRoot, file, pins)
	case s.Trusted != nil:
		paths := make([]string, len(pins))
		for i, p := range pins {
			paths[i] = p.Path
		}
		return s.Trusted(s.ProjectRoot, paths)
	}
	return false
}

// Files returns the settings files hooks are read from, user first.
func (s Sources) Files() (user, project []string) {
	if s.Home != "" {
		user = []string{filepath.Join(s.Home, ".claude", "settings.json"), filepath.Join(s.Home, ".config", "brood", "settings.toml")}
	}
	if s.ProjectRoot != "" {
		r := s.ProjectRoot
		project = []string{
			filepath.Join(r, ".claude", "settings.json"), filepath.Join(r, ".claude", "settings.local.json"),
			filepath.Join(r, ".brood", "settings.toml"), filepath.Join(r, ".brood", "settings.local.toml"),
		}
	}
	keep := func(files []string, project bool) []string {
		return slices.DeleteFunc(files, func(f string) bool { return !settings.Loads(s.Only, project, f) })
	}
	return keep(user, false), keep(project, true)
}

// Load reads the hooks of every file that exists. Hooks add up: every
// matching hook of every file runs. A project's files are skipped, with a
// warning, until the user trusts the project.
func Load(src Sources) (Config, []string, error) {
	cfg := Config{}
	var warnings []string
	user, project := src.Files()
	if err := addFiles(cfg, user); err != nil {
		return nil, nil, err
	}
	src.pin(cfg)
	var present []string
	for _, p := range project {
		if _, err := os.Stat(p); err == nil {
			present = append(present, p)
		}
	}
	if len(present) == 0 {
		return cfg, warnings, nil
	}
	proj := Config{}
	var untrusted []string // files that hooks run, not trusted as they are
	for _, p := range present {
		c := Config{}
		if err := addFiles(c, []string{p}); err != nil {
			return nil, nil, err
		}
		src.pin(c)
		// The check is of the content pinned, so what runs is what was
		// trusted even if the file changes meanwhile.
		if pins := c.pinned(); len(pins) > 0 && !src.runsTrusted(p, pins) {
			for _, pin := range pins {
				untrusted = append(untrusted, pin.Path)
			}
		}
		for ev, gs := range c {
			proj[ev] = append(proj[ev], gs...)
		}
	}
	if proj.Empty() {
		return cfg, warnings, nil
	}
	if src.Trusted == nil || !src.Trusted(src.ProjectRoot, present) {
		warnings = append(warnings, fmt.Sprintf("hooks in this project's settings (%s) are not run: the project is not trusted", strings.Join(rel(src.ProjectRoot, present), ", ")))
		return cfg, warnings, nil
	}
	// What the project's hooks run is trusted as it is now, or not at all.
	if len(untrusted) > 0 {
		warnings = append(warnings, fmt.Sprintf("hooks in this project's settings (%s) are not run: a file they run is not as you trusted it (%s); check it, then run `brood trust` again",
			strings.Join(rel(src.ProjectRoot, present), ", "), strings.Join(rel(src.ProjectRoot, untrusted), ", ")))
		return cfg, warnings, nil
	}
	for ev, gs := range proj {
		cfg[ev] = append(cfg[ev], gs...)
	}
	return cfg, warnings, nil
}

// dir is where the hooks run.
func (s Sources) dir() string {
	if s.Dir != "" {
		return s.Dir
	}
	return s.ProjectRoot
}

// pin records, in every command of cfg, the project files it names as
// they are now (trust.ProgramFiles).
func (s Sources) pin(cfg Config) {
	if s.ProjectRoot == "" {
		return
	}
	for _, gs := range cfg {
		for i := range gs {
			for j := range gs[i].Hooks {
				c := &gs[i].Hooks[j]
				c.pins = trust.PinFiles(trust.ProgramFiles(s.ProjectRoot, s.dir(), c.Command))
			}
		}
	}
}

// pinned are the pins of every command of cfg that name a present file
// (an absent one needs no trust: the pin keeps it absent).
func (c Config) pinned() []trust.Pin {
	var out []trust.Pin
	for _, gs := range c {
		for _, g := range gs {
			for _, h := range g.Hooks {
				for _, p := range h.pins {
					if p.Sum != "" && !slices.Contains(out, p) {
						out = append(out, p)
					}
				}
			}
		}
	}
	return out
}

// programs are the project files that cfg's commands run and that exist
// (absolute paths, sorted).
func (s Sources) programs(cfg Config) []string {
	var out []string
	for _, gs := range cfg {
		for _, g := range gs {
			for _, c := range g.Hooks {
				present, _ := trust.ProgramFiles(s.ProjectRoot, s.dir(), c.Command)
				out = append(out, present...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ProgramFiles are the project files (project-relative, slash-separated)
// that the hooks of one settings file run: what the project grant covers
// with the file itself. dir is where the hooks run.
func ProgramFiles(root, dir string, cfg Config) []string {
	return trust.Rels(root, Sources{ProjectRoot: root, Dir: dir}.programs(cfg))
}

func rel(root string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if r, err := filepath.Rel(root, p); err == nil {
			p = r
		}
		out[i] = p
	}
	return out
}

func addFiles(cfg Config, paths []string) error {
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("hooks: %w", err)
		}
		var c Config
		if strings.HasSuffix(p, ".json") {
			c, err = ParseJSON(p, data)
		} else {
			c, err = ParseTOML(p, data)
		}
		if err != nil {
			return err
		}
		for ev, gs := range c {
			for i := range gs {
				gs[i].Source = p
			}
			cfg[ev] = append(cfg[ev], gs...)
		}
	}
	return nil
}

// Filter is c's tool-call matchers, event by event (PreToolUse and
// PostToolUse with a hook), for children to ask only when one matches.
func (c Config) Filter() protocol.HookFilter {
	f := protocol.HookFilter{}
	for _, ev := range []string{PreToolUse, PostToolUse} {
		for _, g := range c[ev] {
			if len(g.Hooks) > 0 && !slices.Contains(f[ev], g.Matcher) {
				f[ev] = append(f[ev], g.Matcher)
			}
		}
	}
	return f
}
