package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/broodhq/brood/internal/hooks"
	"github.com/broodhq/brood/internal/limits"
	"github.com/broodhq/brood/internal/mcpspec"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/trust"
)

// Project trust is one decision, made in Load (settings.Resolve's gate) and
// asked here by everything a repository's own files could widen: their
// settings (the gate itself), .mcp.json and the MCP servers that project
// agent files define (TrustsProjectFile), the environment those agents ask
// for, and the project's hooks (ProjectTrusted). `brood trust` grants and
// revokes it; --trust-project and BROOD_TRUST_PROJECT=1 force it for a run.

// trustGate is where the user's project grants are kept (never in the
// project), and whether this run forces trust.
func (f *Factory) trustGate() settings.Trust {
	if f.Inherited {
		return settings.Trust{Inherited: true, Grant: f.InheritedGrant}
	}
	t := settings.Trust{Force: f.TrustProject}
	if f.Home != "" {
		t.Store = trust.UserStore(f.Home)
	}
	return t
}

// projectGated are the project's files besides its settings that the grant
// covers, with what each allows: .mcp.json's servers, the project agent
// files that start MCP servers, ask for secret variables, a wider
// permissionMode or a model of their own, and the hooks
// in the project's settings files — and the project files those hooks and
// servers run (a hook's ./scripts/guard.sh, a server's tools/server.js:
// trust.ProgramFiles, trust.ArgvFiles), whose content is part of the grant's key like the
// settings that name them. cwd is where the hooks run.
func projectGated(root, cwd string, own settings.OwnLocal) []settings.GatedFile {
	if root == "" {
		return nil
	}
	var out []settings.GatedFile
	add := func(rel string, data []byte, why string) {
		for i := range out {
			if out[i].File.Rel == rel {
				out[i].Widening = append(out[i].Widening, why)
				return
			}
		}
		out = append(out, settings.GatedFile{File: trust.File{Rel: rel, Data: data}, Widening: []string{why}})
	}
	// runs adds the project files a command runs to the key, and says
	// which in the widening's words.
	runs := func(files []string) string {
		rels := trust.Rels(root, files)
		for _, rel := range rels {
			if data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); err == nil &&
				!slices.ContainsFunc(out, func(g settings.GatedFile) bool { return g.File.Rel == rel }) {
				out = append(out, settings.GatedFile{File: trust.File{Rel: rel, Data: data}})
			}
		}
		if len(rels) == 0 {
			return ""
		}
		return "; runs " + strings.Join(rels, ", ")
	}
	if data, err := os.ReadFile(filepath.Join(root, ".mcp.json")); err == nil {
		servers, _, _ := mcpspec.ParseFile(".mcp.json", data)
		if len(servers) > 0 {
			add(".mcp.json", data, "MCP servers "+strings.Join(slices.Sorted(maps.Keys(servers)), ", ")+" (.mcp.json"+runs(serverFiles(root, servers))+")")
		} else {
			add(".mcp.json", data, "MCP servers (.mcp.json)")
		}
	}
	for _, def := range projectAgents(root) {
		if def.Source != registry.SourceProject {
			continue
		}
		rel, ok := projectRel(root, def.Path)
		if !ok {
			continue
		}
		var inline []string
		specs := map[string]mcpspec.Spec{}
		for _, s := range def.MCPServers {
			if s.Spec != nil {
				inline = append(inline, s.Name)
				specs[s.Name] = *s.Spec
			}
		}
		data, err := os.ReadFile(def.Path)
		if err != nil {
			continue
		}
		if len(inline) > 0 {
			add(rel, data, fmt.Sprintf("agent %s starts MCP servers %s (%s%s)", def.Name, strings.Join(inline, ", "), rel, runs(serverFiles(root, specs))))
		}
		if len(def.Env) > 0 {
			add(rel, data, fmt.Sprintf("agent %s gets %s (%s)", def.Name, strings.Join(def.Env, ", "), rel))
		}
		if def.Model != "" {
			add(rel, data, agentModelWhy(def, rel))
		}
		if len(def.ToolRules) > 0 {
			add(rel, data, fmt.Sprintf("agent %s's tools %s (%s: allow rules for its subagent; until then they only narrow those tools)", def.Name, strings.Join(def.ToolRules, ", "), rel))
		}
		if spawn.WideningMode(def.PermissionMode) {
			add(rel, data, fmt.Sprintf("agent %s runs in permissionMode %s (%s)", def.Name, def.PermissionMode, rel))
		}
		if def.Timeout > 0 || def.MaxTurns > 0 || def.Limits != (limits.Set{}) || def.Isolation != "" {
			// Judged against the user's layers by the gate.
			asks := &settings.AgentAsks{Name: def.Name, Timeout: def.Timeout, MaxTurns: def.MaxTurns, Limits: def.Limits, Isolation: def.Isolation}
			if i := slices.IndexFunc(out, func(g settings.GatedFile) bool { return g.File.Rel == rel }); i >= 0 {
				out[i].Agent = asks
			} else {
				out = append(out, settings.GatedFile{File: trust.File{Rel: rel, Data: data}, Agent: asks})
			}
		}
	}
	gateHooks(root, cwd, own, add, runs)
	return out
}

// agentModelWhy is the trust line's words for a project agent's model:
// which model, where it is written (rel:line), and what choosing it means.
// Every model but inherit waits, as the project settings' model does: an
// alias or a model id is what the run costs, a provider-prefixed one (with
// your keys and base URLs) which provider gets your code, a script a
// program of the repository's.
func agentModelWhy(def *registry.Definition, rel string) string {
	at := rel
	if l := def.ModelLine(); l > 0 {
		at = fmt.Sprintf("%s:%d", rel, l)
	}
	if settings.ScriptModel(def.Model) {
		return fmt.Sprintf("agent %s's model is %s, a program of the repository's (%s)", def.Name, def.Model, at)
	}
	return fmt.Sprintf("agent %s's model is %s (%s chooses its model: what its runs cost and which provider gets your code)", def.Name, def.Model, at)
}

// projectAgents are the agent definitions the project's own directories
// give once resolved (the built-ins shadow any of the same name). Without
// any such directory there are none, and nothing is parsed: the registry
// would parse every built-in to find that out, on every start.
func projectAgents(root string) []*registry.Definition {
	opts := registry.Options{ProjectRoot: root, Claude: true}
	for _, d := range opts.Dirs() {
		if _, err := os.Stat(d.Path); !errors.Is(err, fs.ErrNotExist) {
			reg, _ := registry.Load(opts)
			return reg.All()
		}
	}
	return nil
}

// gateHooks adds the project's settings files that have hooks (but a
// person's own local file: own) with the events they hook and the files
// they run.
func gateHooks(root, cwd string, own settings.OwnLocal, add func(rel string, data []byte, why string), runs func([]string) string) {
	_, project := hooks.Sources{ProjectRoot: root}.Files()
	for _, p := range project {
		rel, _ := projectRel(root, p)
		data, err := os.ReadFile(p)
		if err != nil || (settings.IsLocalFile(rel) && !settings.PersonalNeedsTrust(context.Background(), root, rel, own)) {
			continue // absent, or the person's own file
		}
		parse := hooks.ParseTOML
		if strings.HasSuffix(p, ".json") {
			parse = hooks.ParseJSON
		}
		cfg, err := parse(p, data)
		if err != nil || cfg.Empty() {
			continue
		}
		var evs []string
		for _, ev := range hooks.Events() {
			if cfg.Has(ev) {
				evs = append(evs, ev)
			}
		}
		add(rel, data, fmt.Sprintf("hooks %s (%s%s): %s", strings.Join(evs, ", "), rel, runs(hookFiles(root, cwd, cfg)), hookCommands(cfg)))
	}
}

// hookCommands names every command cfg's hooks run, by event, each whole
// and quoted (a control character, an escape sequence or a line break in
// it is spelt out, never written raw), so that what brood trust and the
// question before the interactive mode show is what would run (redteam
// P3-1): `PreToolUse "./scripts/guard.sh", Stop "make lint"`.
func hookCommands(cfg hooks.Config) string {
	var out []string
	for _, ev := range hooks.Events() {
		for _, g := range cfg[ev] {
			for _, h := range g.Hooks {
				out = append(out, ev+" "+strconv.Quote(h.Command))
			}
		}
	}
	return strings.Join(out, ", ")
}

// hookFiles are the project files (absolute) that cfg's hooks run in cwd.
func hookFiles(root, cwd string, cfg hooks.Config) []string {
	var out []string
	for _, rel := range hooks.ProgramFiles(root, cwd, cfg) {
		out = append(out, filepath.Join(root, filepath.FromSlash(rel)))
	}
	return out
}

// serverFiles are the project files (absolute) that stdio MCP servers'
// commands and arguments name (resolved against the project root).
func serverFiles(root string, specs map[string]mcpspec.Spec) []string {
	var out []string
	for _, sp := range specs {
		if sp.Command == "" {
			continue
		}
		out = append(out, trust.ArgvFiles(root, root, append([]string{sp.Command}, sp.Args...))...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// projectRel is path relative to root, slash-separated, if it is inside.
func projectRel(root, path string) (string, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Grant is this run's trust decision as it goes down the tree in each
// child's envelope (nil: nothing of the project's own files is trusted
// beyond the defaults).
func (f *Factory) Grant() *trust.Grant {
	pt := f.Settings.Trust
	switch {
	case pt.Forced:
		// All, with the files it covers named: what a child may not change
		// (trust.Grant.Held) is known in a forced run too.
		g := ownGrant(trust.GrantOf(pt.Files), pt.Own)
		g.All = true
		return g
	case !pt.Trusted || len(pt.Files) == 0:
		return ownGrant(nil, pt.Own)
	}
	return ownGrant(trust.GrantOf(pt.Files), pt.Own)
}

// ownGrant is g with the person's own local files (the root's word for
// them, which a subagent cannot check: trust.Grant.Own); g when there
// are none.
func ownGrant(g *trust.Grant, own []trust.File) *trust.Grant {
	if len(own) == 0 {
		return g
	}
	if g == nil {
		g = &trust.Grant{}
	}
	g.Own = trust.GrantOf(own).Files
	return g
}

// OwnsLocalContent reports whether the project's local file rel, with
// data, is the person's own for a writer that adds to it (an "always"
// answer): brood wrote it (its ledger), or Claude Code trusts the folder
// (a .claude file). Never because a grant covers it: a grant is revocable
// and the ledger is not, so an answer added to content only a grant (or
// nothing widening) let through would keep the repository's rules after
// `brood trust --revoke` or after the user dropped the same rule of their
// own (review localgrant P2-1, P2-2); such a file stays gated after the
// answer, and the session says so.
func (f *Factory) OwnsLocalContent(rel string, data []byte) bool {
	own := f.ownLocal(f.ProjectRoot)
	return own != nil && own(rel, data)
}

// ownLocal vouches for the local files of the project at root that are
// the person's own: in the root, brood's ledger of the files it wrote
// and Claude Code's folder trust; in a subagent, which can read neither,
// the root's word as the envelope brought it (the grant's Own).
func (f *Factory) ownLocal(root string) settings.OwnLocal {
	if f.Inherited {
		if root != f.ProjectRoot {
			return nil
		}
		return f.InheritedGrant.OwnsLocal
	}
	return settings.RootOwnLocal(root, f.Home)
}

// TrustsProjectFile reports whether the user trusts the project file at
// path (.mcp.json, an agent definition that defines MCP servers inline or
// asks for secret variables): the project is trusted, and the file is one
// the grant covers, as it was when granted.
func (f *Factory) TrustsProjectFile(path string) bool {
	return f.Grant().Trusts(f.ProjectRoot, path)
}

// ProjectTrusted decides whether the project's own settings files may add
// hooks: each file (but a person's own local file) must be
// covered by the grant.
func (f *Factory) ProjectTrusted(root string, files []string) bool {
	g := f.Grant()
	for _, p := range files {
		rel, ok := projectRel(root, p)
		if !ok {
			return false
		}
		if f.personalSettings(root, rel) {
			continue
		}
		if !g.Trusts(root, p) {
			return false
		}
	}
	return true
}

// ProjectRunsTrusted decides whether the project files that the hooks of
// one project settings file run may run, with the content they were pinned
// with: what a person's own local file runs is theirs; otherwise
// the grant must cover every one with that content.
func (f *Factory) ProjectRunsTrusted(root, file string, pins []trust.Pin) bool {
	if rel, ok := projectRel(root, file); ok && f.personalSettings(root, rel) {
		return true
	}
	g := f.Grant()
	for _, p := range pins {
		if !g.TrustsPin(root, p) {
			return false
		}
	}
	return true
}

// personalSettings reports whether rel is a local settings file
// (.claude/settings.local.json, .brood/settings.local.toml) that is the
// person's own (settings.PersonalNeedsTrust).
func (f *Factory) personalSettings(root, rel string) bool {
	local := rel == ".claude/settings.local.json" || rel == ".brood/settings.local.toml"
	return local && !settings.PersonalNeedsTrust(context.Background(), root, rel, f.ownLocal(root))
}

// untrustedSaid reports whether a reader's own "not trusted" warning is
// already said by the project trust notice (one line names it all).
func (f *Factory) untrustedSaid(warning string) bool {
	return f.Settings.Trust.Gated() && strings.Contains(warning, "trust")
}
