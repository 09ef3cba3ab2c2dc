package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/trust"
)

// flagSettings is what brood applies of a Claude Code settings file given
// with --settings: its permissions, model and env. The user named it on the
// command line, so it needs no project trust; it sits above the settings
// files and the environment and below the other flags (an explicit
// --model or --permission-mode wins), as Claude Code layers it.
type flagSettings struct {
	Permissions struct {
		Allow       []string `json:"allow"`
		Deny        []string `json:"deny"`
		Ask         []string `json:"ask"`
		DefaultMode string   `json:"defaultMode"`
	} `json:"permissions"`
	Model string `json:"model"`
	// Env is applied as a trusted .claude/settings.json's is
	// (Factory.ApplyEnv), over it.
	Env map[string]string `json:"env"`
	// Not applied from --settings (a note says so).
	Hooks json.RawMessage `json:"hooks"`
}

// modes are the permission modes brood knows.
var modes = []string{"default", "acceptEdits", "bypassPermissions", "plan"}

// applySettings layers --settings (a file, or a JSON string) over the
// factory's settings.
func (c *Compat) applySettings(f *cmdutil.Factory) error {
	if c.Settings == "" {
		return nil
	}
	name, data := "--settings", []byte(c.Settings)
	if !strings.HasPrefix(strings.TrimSpace(c.Settings), "{") {
		b, err := os.ReadFile(c.Settings)
		if err != nil {
			return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("--settings: %w; give a file or a JSON string like '{\"permissions\":{\"deny\":[\"Bash\"]}}'", err))
		}
		name, data = "--settings "+c.Settings, b
	}
	var s flagSettings
	if err := json.Unmarshal(data, &s); err != nil {
		return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("%s: %s; fix the JSON", name, jsonErr(data, err)))
	}
	p, sp := &f.Settings.Permissions, s.Permissions
	if sp.DefaultMode != "" {
		if !slices.Contains(modes, sp.DefaultMode) {
			return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("%s: line %d: permissions.defaultMode %q is not one of %s", name, keyLine(data, "defaultMode"), sp.DefaultMode, strings.Join(modes, ", ")))
		}
		p.Mode = sp.DefaultMode
	}
	// New lists: the resolved settings' may share memory with others.
	p.Allow = slices.Concat(p.Allow, sp.Allow)
	p.Deny = slices.Concat(p.Deny, sp.Deny)
	p.Ask = slices.Concat(p.Ask, sp.Ask)
	for _, r := range sp.Ask {
		// (a refusal by it says where it came from)
		p.AskFrom = append(slices.Clip(p.AskFrom), trust.RuleFiles{Rule: r, Files: []string{"the --settings file"}})
	}
	if s.Model != "" {
		f.Settings.Model = s.Model
	}
	if len(s.Env) > 0 {
		// To the processes brood starts and the model client's
		// configuration, never brood's own environment.
		f.ApplyEnv(name, s.Env)
	}
	if len(s.Hooks) > 0 && !bytes.Equal(bytes.TrimSpace(s.Hooks), []byte("null")) {
		fmt.Fprintf(f.Err, "brood: %s: hooks not applied: brood takes only permissions, model and env from --settings; put them in .claude/settings.json\n", name)
	}
	return nil
}

// jsonErr says where in data a JSON error is, by line.
func jsonErr(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("line %d: %v", bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))+1, err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("line %d: %s is not a %s", bytes.Count(data[:min(int(te.Offset), len(data))], []byte("\n"))+1, te.Field, te.Type)
	}
	return err.Error()
}

// keyLine is the line of data where "key" first appears.
func keyLine(data []byte, key string) int {
	i := bytes.Index(data, []byte(`"`+key+`"`))
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}
