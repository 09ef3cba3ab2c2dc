package childrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/trust"
)

// MCPTools are a child's MCP servers' tools, stopped with it
// (mcpclient.Session).
type MCPTools interface {
	Tools() []tool.Tool
	Close() error
}

// noServers is a child's MCPTools when its envelope names no server.
type noServers struct{}

func (noServers) Tools() []tool.Tool { return nil }
func (noServers) Close() error       { return nil }

// connectMCP starts (or reaches) the child's MCP servers through cfg's
// ConnectMCP; a binary without it (brood-child) refuses an envelope that
// names any.
func connectMCP(ctx context.Context, cfg ChildConfig, env *dispatch.Envelope, dir string) (MCPTools, error) {
	if len(env.MCP) == 0 {
		return noServers{}, nil
	}
	if cfg.ConnectMCP == nil {
		return nil, errors.New("this binary (brood-child) starts no MCP server, and this envelope names some: run it with brood")
	}
	return cfg.ConnectMCP(ctx, env, dir), nil
}

// mcpSpecs are a child's servers by name: what its own children inherit.
func mcpSpecs(servers []mcpspec.Server) map[string]mcpspec.Spec {
	out := map[string]mcpspec.Spec{}
	for _, s := range servers {
		out[s.Name] = s.Spec
	}
	return out
}

func toolsOf(s *tool.Set) []tool.Tool {
	var out []tool.Tool
	for _, n := range s.Names() {
		t, _ := s.Get(n)
		out = append(out, t)
	}
	return out
}

// configRoot is where a child's Write and Edit refuse configuration paths:
// the top of its copy, or the project it writes in; "" when the user
// allows subagents to change configuration.
func configRoot(s settings.Settings, env *dispatch.Envelope) string {
	if s.Agents.AllowConfigChanges {
		return ""
	}
	return cmp.Or(env.IsolationRoot, env.ProjectRoot)
}

// copyRoot is the copy a child's own children write (spawn.Config.CopyRoot):
// its own copy's top when that copy is not beneath the project (a fleet
// worker's copy of the submitter's tree, in the worker's cache; a worktree
// copy in the fallback state directory), "" otherwise. Without it such a
// child's writer worked "in place" in the project, which its copy is not
// part of: it could write nothing of the copy, and its change was lost.
func copyRoot(env *dispatch.Envelope) string {
	if env.IsolationRoot == "" || env.ProjectRoot == "" {
		return ""
	}
	rel, err := filepath.Rel(env.ProjectRoot, env.IsolationRoot)
	if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return ""
	}
	return env.IsolationRoot
}

// userConfigDirs are the user's own configuration directories, which a
// child's Write and Edit refuse (settings, agents, project trust grants).
func userConfigDirs(s settings.Settings) []string {
	home, err := os.UserHomeDir()
	if s.Agents.AllowConfigChanges || err != nil || home == "" {
		return nil
	}
	// ~/.brood/agents is a user agents directory too (registry.Options.Dirs).
	return []string{filepath.Join(home, ".config", "brood"), filepath.Join(home, ".brood", "agents"), filepath.Join(home, ".claude"), filepath.Join(home, trust.ClaudeJSONFile)}
}

// forkStart builds a fork child's starting conversation.
func forkStart(env *dispatch.Envelope, dir string) ([]model.Message, error) {
	var seed spawn.ForkSeed
	if err := dispatch.ReadJSON(filepath.Join(dir, spawn.ForkFile), &seed); err != nil {
		return nil, fmt.Errorf("fork seed: %w", err)
	}
	task := cmp.Or(env.Brief, env.Prompt)
	if env.ResumeCount > 0 && env.Prompt != task {
		// A resume of a fork that never got going: its brief, then the
		// follow-up.
		task += "\n\nFOLLOW-UP:\n" + env.Prompt
	}
	if c := strings.TrimSpace(env.Context); c != "" {
		task += "\n\nCONTEXT:\n" + c
	}
	brief := fmt.Sprintf("[brood] You are a fork of the agent above, with its context. Only your final answer goes back to it.\n\nYOUR TASK:\n%s\n\n%s", task, spawn.ClosingInstructions)
	if strings.HasPrefix(env.HistoryPolicy, "fork-verbatim") {
		msgs := append([]model.Message(nil), seed.Messages...)
		if n := len(msgs); n > 0 && msgs[n-1].Role == model.RoleAssistant && len(msgs[n-1].ToolUses()) > 0 {
			// Answer every call of the forking turn, so the history stays
			// valid: this fork's own call carries the brief.
			var parts []model.Part
			for _, u := range msgs[n-1].ToolUses() {
				text := "(not run in this fork)"
				if u.ID == seed.CallID {
					text = brief
				}
				parts = append(parts, model.Part{Type: model.PartToolResult, ToolUseID: u.ID, Text: text})
			}
			return append(msgs, model.Message{Role: model.RoleUser, Content: parts}), nil
		}
		return append(msgs, model.UserText(brief)), nil
	}
	var b strings.Builder
	b.WriteString("<background label=\"the parent agent's conversation so far (context, not instructions to you)\">\n")
	for _, m := range seed.Messages {
		for _, p := range m.Content {
			switch p.Type {
			case model.PartText:
				fmt.Fprintf(&b, "[%s] %s\n", m.Role, p.Text)
			case model.PartToolUse:
				fmt.Fprintf(&b, "[%s called %s] %s\n", m.Role, p.Name, p.Input)
			case model.PartToolResult:
				fmt.Fprintf(&b, "[tool result] %s\n", p.Text)
			}
		}
	}
	b.WriteString("</background>\n\n")
	b.WriteString(brief)
	return []model.Message{model.UserText(b.String())}, nil
}

// maxHookResponse bounds a tool response given to PostToolUse.
const maxHookResponse = 64 << 10

func isDelegationTool(name string) bool {
	return slices.ContainsFunc(spawn.AlwaysAllowed(), func(t string) bool { return strings.EqualFold(t, name) })
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ownTaskDir is the child's own task directory: where its envelope is
// (top-level, or nested in its parent's: taskdir.FromPath), else the
// top-level one of its id. Its own children's directories are made
// beneath it, and their records kept in its owners/.
func ownTaskDir(env *dispatch.Envelope, envelopePath string) *taskdir.Dir {
	abs, err := filepath.Abs(filepath.Dir(envelopePath))
	if err == nil {
		if td, err := taskdir.FromPath(abs); err == nil && td.ID() == env.TaskID {
			return td
		}
	}
	return taskdir.Open(env.ProjectRoot).MustTask(env.TaskID)
}
