package spawn

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/trust"
)

// childMode is the permission mode a child runs in: its definition's
// permissionMode (Claude Code's key) granted within what the parent itself
// may do, else the parent's mode. The note says when the definition asked
// for more than it got.
//
// The rule: a mode that allows less than the parent's is always granted
// (plan, dontAsk, default). acceptEdits — edits inside the workspace without
// asking — is granted under a default, acceptEdits or bypassPermissions
// parent: such a parent may make those edits itself (in default mode after
// asking the user, who chose the agent file that asks for it), and a child
// has no user to ask. bypassPermissions is granted only under a
// bypassPermissions parent. A plan (read-only) or dontAsk parent is never
// widened. Deny rules are inherited whatever the mode.
func childMode(defMode, parentMode string) (mode, note string) {
	if defMode == "" {
		return parentMode, ""
	}
	want, err := tool.ParseMode(defMode)
	if err != nil {
		return parentMode, fmt.Sprintf("permissionMode %q is not a mode; the parent's %s applies", defMode, displayMode(parentMode))
	}
	have, err := tool.ParseMode(parentMode)
	if err != nil {
		have = tool.ModeDefault
	}
	granted := func() bool {
		switch want {
		case tool.ModePlan:
			return true
		case tool.ModeDontAsk, tool.ModeDefault:
			return have != tool.ModePlan && have != tool.ModeDontAsk || want == have
		case tool.ModeAcceptEdits:
			return have == tool.ModeDefault || have == tool.ModeAcceptEdits || have == tool.ModeBypass
		case tool.ModeBypass:
			return have == tool.ModeBypass
		}
		return false
	}()
	if granted {
		return string(want), ""
	}
	return parentMode, fmt.Sprintf("the agent asks for permissionMode %s, which is beyond its parent's %s; it runs in %s", want, displayMode(parentMode), displayMode(parentMode))
}

func displayMode(m string) string {
	if m == "" {
		return "default"
	}
	return m
}

// WideningMode reports whether an agent file's permissionMode lets its
// child do more without asking than brood's default: acceptEdits and
// bypassPermissions. A project's agent file (a cloned repository's) asking
// for one waits for the user's trust in the project (the one decision:
// cmdutil's projectGated lists it, the root's grant covers it).
func WideningMode(mode string) bool {
	m, err := tool.ParseMode(mode)
	return err == nil && (m == tool.ModeAcceptEdits || m == tool.ModeBypass)
}

// trustedMode is the permissionMode of def that may be honoured: a
// project agent's widening mode only when the root's grant trusts the file
// as it is now (d.trusts: the root's decision, never the child's).
func (d *Dispatcher) trustedMode(def *registry.Definition) string {
	if def.Source == registry.SourceProject && WideningMode(def.PermissionMode) && !d.trusts(def.Path) {
		return ""
	}
	return def.PermissionMode
}

// modeTrustNote says when trustedMode left a project agent's mode out.
func (d *Dispatcher) modeTrustNote(def *registry.Definition) string {
	if d.trustedMode(def) == def.PermissionMode {
		return ""
	}
	return fmt.Sprintf("permissionMode %s not honoured: %s is a project file, and the project is not trusted (run `brood trust`, or move the agent to ~/.config/brood/agents); the parent's mode applies", def.PermissionMode, def.Path)
}

// trustedModel is def's model, but one that a project's own agent file
// names (a cloned repository's: an alias, a model id, provider/model, a
// script) is read as inherit until the user trusts the project, as the
// project settings' model is: it is what the child's runs cost and which
// provider (with the user's keys and base URLs) gets the code, and a
// script is a program of the repository's that would decide every tool
// call. note says so, naming the file and line.
func (d *Dispatcher) trustedModel(def *registry.Definition) (model, note string) {
	if def.Source == registry.SourceProject && def.Model != "" && !d.trusts(def.Path) {
		at := def.Path
		if l := def.ModelLine(); l > 0 {
			at = fmt.Sprintf("%s:%d", def.Path, l)
		}
		return "", fmt.Sprintf("model %s not honoured: %s is a project file, and the project is not trusted (run `brood trust`, or move the agent to ~/.config/brood/agents); the parent's model applies", def.Model, at)
	}
	return def.Model, ""
}

// agentToolRules adds def's tool specifiers (`tools: Bash(python3:*)`) to
// its child's permissions: allow rules, as Claude Code reads them — but a
// project agent's only when the root's grant covers its file as it is now
// (the same rule in the project's settings waits for trust too). Until
// then they narrow the tools they name and allow nothing (Only; Held, so a
// refusal they would have allowed says to trust the project), and the
// note says so.
func (d *Dispatcher) agentToolRules(def *registry.Definition, perms *dispatch.Permissions) string {
	if len(def.ToolRules) == 0 {
		return ""
	}
	if def.Source != registry.SourceProject || d.trusts(def.Path) {
		perms.Allow = append(perms.Allow, def.ToolRules...)
		return ""
	}
	file := def.Path
	if rel, err := filepath.Rel(d.cfg.ProjectRoot, def.Path); err == nil && filepath.IsLocal(rel) {
		file = filepath.ToSlash(rel)
	}
	perms.Only, perms.OnlyFile = slices.Clone(def.ToolRules), file
	perms.Held = slices.Clone(perms.Held)
	for _, r := range def.ToolRules {
		perms.Held = append(perms.Held, trust.HeldRule{Rule: r, File: file})
	}
	return fmt.Sprintf("tools %s are not allow rules: %s is a project file, and the project is not trusted (run `brood trust`, or move the agent to ~/.config/brood/agents); they only narrow those tools, and your own rules decide each call",
		strings.Join(def.ToolRules, ", "), file)
}
