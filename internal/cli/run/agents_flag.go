package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/registry"
)

// applyAgents reads --agents (Claude Code's JSON object of agents, or a
// file holding one) into the factory's session agents, above every agent
// file. Any error (a field missing or of the wrong type) stops the run
// with exit 1 and one line naming the file (or "--agents JSON"), each
// agent and its fields, as Claude Code's "Invalid --agents
// configuration"; warnings are said and the run goes on.
func (c *Compat) applyAgents(f *cmdutil.Factory) error {
	if c.Agents == "" {
		return nil
	}
	source, data := "--agents JSON", []byte(c.Agents)
	if t := strings.TrimSpace(c.Agents); !strings.HasPrefix(t, "{") && !json.Valid([]byte(t)) {
		b, err := os.ReadFile(c.Agents)
		if err != nil {
			return cmdutil.ExitCode(cmdutil.ExitFailed, fmt.Errorf("--agents: %w; give a JSON object like '{\"reviewer\":{\"description\":\"Reviews code\",\"prompt\":\"You are a code reviewer\"}}' or a file holding one", err))
		}
		source, data = c.Agents, b
	}
	defs, diags := registry.ParseSession(source, data)
	for _, d := range diags {
		if d.Severity != registry.SeverityError {
			fmt.Fprintln(f.Err, "brood:", d.String())
		}
	}
	if err := agentsError(diags); err != nil {
		return cmdutil.ExitCode(cmdutil.ExitFailed, err)
	}
	f.SessionAgents = defs
	return nil
}

// agentsError is the one line that says every error of --agents: each
// place (the source, or the source and an agent) once, then its
// problems; nil when there is none.
func agentsError(diags []registry.Diagnostic) error {
	var order []string
	byPath := map[string][]string{}
	for _, d := range diags {
		if d.Severity != registry.SeverityError {
			continue
		}
		if byPath[d.Path] == nil {
			order = append(order, d.Path)
		}
		byPath[d.Path] = append(byPath[d.Path], d.Message)
	}
	if len(order) == 0 {
		return nil
	}
	parts := make([]string, len(order))
	for i, p := range order {
		parts[i] = p + ": " + strings.Join(byPath[p], "; ")
	}
	return errors.New(strings.Join(parts, " · "))
}

// checkStreamFlags refuses, as Claude Code does (exit 1), the stream
// flags without the formats they need.
func (o *Options) checkStreamFlags() error {
	out := o.format()
	switch {
	case o.Compat.ReplayUser && (o.Compat.InputFormat != "stream-json" || out != "stream-json"):
		return cmdutil.ExitCode(cmdutil.ExitFailed, errors.New("--replay-user-messages requires both --input-format=stream-json and --output-format=stream-json"))
	case o.Compat.Partial && out != "stream-json":
		return cmdutil.ExitCode(cmdutil.ExitFailed, errors.New("--include-partial-messages requires --print and --output-format=stream-json"))
	}
	return nil
}
