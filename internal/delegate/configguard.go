package delegate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/trust"
)

// configGuard keeps a subagent from changing brood's and Claude Code's
// configuration (trust.IsConfigPath: .brood/ less its records, .claude/,
// .mcp.json) on its own. Three layers: the child's Write and Edit refuse
// those paths (tool.Env.ConfigRoot); an isolated child's patch leaves them
// out (isolate.Options.AllowConfig); and for a child that writes in place —
// whose Bash the kernel does not stop — the parent snapshots the
// configuration before the spawn and puts back whatever changed after it.
// Each change, refused or allowed (agents.allow_config_changes), is
// reported on its own line of the result.
type configGuard struct {
	root   string
	allow  bool
	before *trust.ConfigState
	err    error
}

func (d *Dispatcher) newConfigGuard() *configGuard {
	return &configGuard{root: d.cfg.ProjectRoot, allow: d.cfg.Settings.Agents.AllowConfigChanges}
}

// watch snapshots the configuration when the child writes in place (no
// isolated copy). Call it once the workspace is prepared, before the spawn.
func (g *configGuard) watch(readOnly bool, ws *isolate.Workspace) {
	if readOnly || (ws != nil && ws.Mode != isolate.ModeNone) {
		return
	}
	g.before, g.err = trust.SnapshotConfig(g.root)
}

const configWhy = "a subagent may not change brood's or Claude Code's configuration (.brood/, .claude/, .mcp.json); allow it with agents.allow_config_changes = true in your own settings or BROOD_ALLOW_CONFIG_CHANGES=1"

// settle undoes (or, when allowed, reports) what the child changed and
// returns the result's lines about it. Call it after the child exited and
// its isolated patch, if any, was brought back.
func (g *configGuard) settle(ws *isolate.Workspace) []string {
	var lines []string
	if ws != nil {
		rep := ws.Config()
		if len(rep.Refused) > 0 {
			lines = append(lines, fmt.Sprintf("configuration changes NOT applied: %s — %s. The refused changes are in %s: review them and `git apply` them yourself if you want them",
				strings.Join(rep.Refused, ", "), configWhy, rep.Patch))
		}
		if len(rep.Applied) > 0 {
			lines = append(lines, "configuration changed by the subagent (allowed by agents.allow_config_changes): "+strings.Join(rep.Applied, ", "))
		}
	}
	if g.err != nil {
		return append(lines, "configuration not watched ("+g.err.Error()+"): check .brood/ and .claude/ for changes yourself")
	}
	if g.before == nil {
		return lines
	}
	changed, err := g.before.Changes()
	switch {
	case err != nil:
		return append(lines, "configuration not checked after the run ("+err.Error()+"): check .brood/ and .claude/ for changes yourself")
	case len(changed) == 0:
		return lines
	case g.allow:
		return append(lines, "configuration changed by the subagent (allowed by agents.allow_config_changes): "+strings.Join(leaves(changed), ", "))
	}
	failed, err := g.before.Restore(changed)
	line := fmt.Sprintf("configuration changes refused and undone: %s — %s", strings.Join(leaves(changed), ", "), configWhy)
	if len(failed) > 0 || err != nil {
		line += fmt.Sprintf(". NOT undone (check them yourself): %s %v", strings.Join(failed, ", "), errText(err))
	}
	return append(lines, line)
}

// configRoot is where a child's Write and Edit refuse configuration paths:
// the top of its copy, or the project it writes in; "" when the user
// allows subagents to change configuration.
func configRoot(s settings.Settings, env *dispatch.Envelope) string {
	if s.Agents.AllowConfigChanges {
		return ""
	}
	return firstNonEmpty(env.IsolationRoot, env.ProjectRoot)
}

// leaves drops the directories that only hold other changed paths, so a
// report names .claude/agents/helper.md, not .claude and .claude/agents too.
func leaves(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !slices.ContainsFunc(paths, func(q string) bool { return strings.HasPrefix(q, p+"/") }) {
			out = append(out, p)
		}
	}
	return out
}

// childEnvAllow is the secret-looking variables a child keeps: want (its
// definition's env list and what its MCP servers reference), except that a
// project's own agent file (a cloned repository's) gets none unless the run
// trusts the project explicitly (--trust-project, BROOD_TRUST_PROJECT=1, or
// a grant of its settings) — else a repository could hand its agent the
// user's tokens.
func childEnvAllow(def *registry.Definition, want []string, s settings.Settings) ([]string, string) {
	if len(want) == 0 || def.Source != registry.SourceProject || s.Trust.Forced || (s.Trust.Trusted && s.Trust.Hash != "") {
		return want, ""
	}
	return nil, fmt.Sprintf("env: %s not passed: %s is a project file, and the project is not trusted (run with --trust-project or BROOD_TRUST_PROJECT=1, or move the agent to ~/.config/brood/agents)", strings.Join(want, ", "), def.Path)
}

// userConfigDirs are the user's own configuration directories, which a
// child's Write and Edit refuse (settings, agents, project trust grants).
func userConfigDirs(s settings.Settings) []string {
	home, err := os.UserHomeDir()
	if s.Agents.AllowConfigChanges || err != nil || home == "" {
		return nil
	}
	return []string{filepath.Join(home, ".config", "brood"), filepath.Join(home, ".claude")}
}
