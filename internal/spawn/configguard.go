package spawn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/registry"
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
// reported on its own line of the result. The repository's git
// configuration (.git/config, .git/hooks, .git/info, .gitmodules:
// trust.IsGitConfigPath) is watched the same way and reported on a line of
// its own: a hook or an fsmonitor a child leaves there would run in the
// user's next git command. (brood's own git calls never run them: gitx.)
type configGuard struct {
	d      *Dispatcher
	root   string
	allow  bool
	before *trust.ConfigState
	home   *trust.ConfigState     // the user's own configuration (trust grants, settings, agents)
	claude *trust.ClaudeJSONState // ~/.claude.json's servers and per-project allowances
	git    *trust.ConfigState     // the repository's git configuration (gitConfigState)
	progs  *trust.ConfigState     // the files trusted hooks and MCP servers run (programguard.go)
	objs   *trust.LooseObjects    // the repository's loose objects, which a writer could replace
	err    error
	// nestedCfg is the project configuration below the root
	// (configguard_nested.go); nestedErr why it is not watched.
	nestedCfg *trust.ConfigState
	nestedErr error
	// openedBefore are the directories the spawn's walk gave their
	// owner's read bit back (trust.Nested.Opened).
	openedBefore []string
	// bits are the index entries' assume-unchanged and skip-worktree
	// bits before the spawn (configguard_index.go); bitsLine what the
	// child set of them, cleared.
	bits     map[string][]string
	bitsErr  error
	bitsLine string
	bitsDone bool
	// userStamps stamp the files under those bits before the spawn;
	// userChanged and userLine name those the child changed.
	userStamps  map[string]string
	userChanged []string
	userLine    string
	index       string // the index file, and its stamp before the spawn
	indexWas    string
	indexSeen   bool
	// packs and replace are the object store's packs and replace refs
	// before the spawn (configguard_store.go); storeLines what the child
	// changed of them.
	packs      *trust.Packs
	worktrees  []string // .git/worktrees' entries
	replace    map[string]string
	replaceErr error
	storeDone  bool
	storeLines []string
	// nestedStores are the nested repositories' packs before the spawn
	// (configguard_nestedstore.go), checked once (nestedDone).
	nestedStores []nestedStore
	nestedDone   bool
	// nested is the walk for nested repositories after the child
	// (prefetchNested), begun beside the parent's own after-walk.
	nested chan nestedTops
	// walkBefore and walkAfter are the walks for nested repositories
	// before and after the child, which list the tree's links for the
	// link pass too (linkguard.go); nil when not made.
	walkBefore, walkAfter *nestedTops
	// gitLinks are the links removed on the way to a reflog before
	// brood's own git wrote it (clearReflogLinks), for the link pass.
	gitLinks []isolate.Link
	// id is the task's; child its process once started; recorded the
	// guard's record on disk, "" when none (configguard_durable.go);
	// warned that a record could not be written was said.
	id       string
	child    *procID
	cgroup   string // the child's own cgroup, once started ("" none)
	recorded string
	warned   bool
	unkept   error // the record is too large to keep: the child may not start (refusal)
}

// nestedTops is one answer of trust.NestedWalk, of the tree at root.
type nestedTops struct {
	root  string
	found trust.Nested
	err   error
}

// prefetchNested begins, once the child has exited, the walk of the tree
// for nested repositories and project configuration that settle needs, so that it runs beside the
// parent's after-walk instead of after it. It only reads the tree, but for the owner's read
// bit it gives back to a directory a child made search-only
// (trust.Nested.Opened).
func (g *configGuard) prefetchNested() {
	if g == nil || !g.walksAfter() || g.nested != nil {
		return
	}
	g.nested = make(chan nestedTops, 1)
	root := g.walkRoot()
	go func() {
		found, err := g.walkTree(root)
		g.nested <- nestedTops{root, found, err}
	}()
}

// walksAfter reports whether the tree is walked after the child: for
// nested repositories' or project roots' configuration, or for its links
// (the walk before listed them).
func (g *configGuard) walksAfter() bool {
	return g.git != nil || g.nestedCfg != nil || g.walkBefore != nil
}

func (d *Dispatcher) newConfigGuard(id string) *configGuard {
	return &configGuard{d: d, root: d.cfg.ProjectRoot, allow: d.cfg.Settings.Agents.AllowConfigChanges, id: id}
}

// watch snapshots the configuration when the child writes in place (no
// isolated copy). Call it once the workspace is prepared, before the spawn.
func (g *configGuard) watch(ctx context.Context, readOnly bool, ws *isolate.Workspace) {
	if readOnly || (ws != nil && ws.Mode != isolate.ModeNone) {
		return
	}
	g.d.cfgMu.Lock()
	defer g.d.cfgMu.Unlock()
	g.before, g.err = trust.SnapshotConfig(g.root)
	var nested trust.Nested
	if g.err == nil {
		g.git, nested, g.err = gitConfigState(g.root, g.walkTree, &g.walkBefore)
	}
	if g.err == nil && g.git == nil {
		nested, g.nestedErr = g.walkTree(g.root)
		g.walkBefore = &nestedTops{g.root, nested, g.nestedErr}
	}
	if g.err == nil && g.nestedErr == nil {
		g.watchNested(nested.Config)
	}
	g.openedBefore = nested.Opened
	if g.git != nil && g.git.Common() != "" {
		g.objs = trust.SnapshotLooseObjects(g.git.Common())
	}
	if len(nested.GitDirs) > 0 {
		// Nested repositories' objects are the tree's to the writer.
		g.objs = g.objs.WithNested(g.walkRoot(), nested.GitDirs)
		g.watchNestedStores(g.walkRoot(), nested.GitDirs)
	}
	g.watchIndex(ctx)
	g.watchStore(ctx)
	g.watchPrograms()
	if home, err := os.UserHomeDir(); err == nil && home != "" && g.err == nil {
		// A child's nested dispatcher is kept by its own sandbox from
		// reading most of the user's configuration: what it may not read
		// at the snapshot is watched by its mode (review33 P3-1); the
		// root takes any refusal as an error (review35 P1-1).
		snapUser := trust.SnapshotUserConfig
		if g.d.cfg.Depth > 0 {
			snapUser = trust.SnapshotUserConfigConfined
		}
		g.home, g.err = snapUser(home)
		if g.err == nil {
			// (A ~/.claude.json a child's own sandbox hides is one its
			// children cannot write either: not watched, the rest is.)
			if g.claude, g.err = trust.SnapshotClaudeJSON(home); g.d.cfg.Depth > 0 && errors.Is(g.err, fs.ErrPermission) {
				g.claude, g.err = nil, nil
			}
		}
	}
	if g.before != nil {
		g.d.cfgLive = append(g.d.cfgLive, g)
		// On disk before the child starts: a root that dies before the
		// child ends leaves it for the next brood (RestoreCrashedGuards).
		g.persist()
	}
}

// release takes the guard out of the live ones, if it still is (a child
// that never started is never settled).
func (g *configGuard) release() {
	g.d.cfgMu.Lock()
	defer g.d.cfgMu.Unlock()
	g.done()
	g.forget()
}

// done takes the guard out of those the user's writes go into (the
// caller holds cfgMu).
func (g *configGuard) done() {
	g.d.cfgLive = slices.DeleteFunc(g.d.cfgLive, func(x *configGuard) bool { return x == g })
}

// ConfigWrite is one configuration file the user's own process wrote
// while subagents may run in place (the TUI keeping an "always" answer):
// the wire type an Answer carries down (package protocol).
type ConfigWrite = protocol.ConfigWrite

// AcceptConfig takes the user's own configuration writes into the guards
// of this dispatcher's running in-place writers: they are the baseline now,
// and are not undone as the child's. The writes come from this process's
// user side or down the stdin pipe from the parent, never from a child.
func (d *Dispatcher) AcceptConfig(ws ...ConfigWrite) {
	if len(ws) == 0 {
		return
	}
	d.cfgMu.Lock()
	defer d.cfgMu.Unlock()
	for _, g := range d.cfgLive {
		for _, w := range ws {
			g.before.Accept(w.Path, w.Data, w.Perm)
		}
		g.persist()
	}
}

// WriteConfig writes one configuration file of the project (rel,
// project-relative) for the user: update gets the file as the running
// in-place writers' guards know it — their snapshot with the user's earlier
// writes, not what a child may have put there since; the disk when no child
// works in place — and returns the new content. The write is taken into
// every live guard (so it is not undone as a child's change) and returned,
// for the answer that carries it down to the children's own guards.
func (d *Dispatcher) WriteConfig(rel string, update func(old []byte, exists bool) ([]byte, error)) (ConfigWrite, error) {
	rel = filepath.ToSlash(filepath.Clean(rel))
	if !filepath.IsLocal(rel) || !trust.IsConfigPath(rel) {
		return ConfigWrite{}, fmt.Errorf("%s is not a configuration file of the project", rel)
	}
	d.cfgMu.Lock()
	defer d.cfgMu.Unlock()
	abs := filepath.Join(d.cfg.ProjectRoot, filepath.FromSlash(rel))
	old, exists, fromDisk := []byte(nil), false, true
	if len(d.cfgLive) > 0 {
		// The oldest snapshot is the one no running child has touched.
		data, ok, kept := d.cfgLive[0].before.Baseline(rel)
		old, exists, fromDisk = data, ok, ok && !kept
	}
	if fromDisk {
		data, err := os.ReadFile(abs)
		switch {
		case err == nil:
			old, exists = data, true
		case !errors.Is(err, fs.ErrNotExist):
			return ConfigWrite{}, err
		default:
			old, exists = nil, false
		}
	}
	data, err := update(old, exists)
	if err != nil {
		return ConfigWrite{}, err
	}
	w := ConfigWrite{Path: rel, Data: data, Perm: 0o644}
	if err := writeFilePerm(abs, data, w.Perm); err != nil {
		return ConfigWrite{}, err
	}
	for _, g := range d.cfgLive {
		g.before.Accept(w.Path, w.Data, w.Perm)
		g.persist()
	}
	return w, nil
}

// writeFilePerm writes path with perm, tmp+rename (a link at path is
// replaced, never followed).
func writeFilePerm(path string, data []byte, perm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(perm)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}

// gitConfigState snapshots the git configuration of the repository
// holding root (nil outside one), found by reading files only.
// It returns the walk of the tree for nested repositories it made, whose
// Config the guard snapshots too, and keeps it, failed or not, in walked.
func gitConfigState(root string, walk func(string) (trust.Nested, error), walked **nestedTops) (*trust.ConfigState, trust.Nested, error) {
	top, gitDir, common, err := gitx.Dirs(root)
	if errors.Is(err, gitx.ErrNoRepo) {
		return nil, trust.Nested{}, nil
	}
	if err != nil {
		return nil, trust.Nested{}, err
	}
	nested, err := walk(top)
	*walked = &nestedTops{top, nested, err}
	if err != nil {
		return nil, trust.Nested{}, err
	}
	c, err := trust.SnapshotGit(top, common, append(trust.GitConfigTops(top, gitDir, common), nested.Git...))
	return c, nested, err
}

// undoGit is undoAs for the repository's git configuration, nested
// repositories included: one the child made since the snapshot (its
// .git/config, hooks/, info/, a .git file or link, its .gitmodules) is
// taken in as configuration that was not there (trust.ConfigState.Widen),
// so it is removed, and reported by its tops, not file by file. What is
// left of such a repository (HEAD, objects, refs) runs nothing.
func (g *configGuard) undoGit(nested []string, err error) []string {
	var added []string
	if err == nil {
		added = g.git.Widen(nested)
	}
	// A submodule's git directory made in a .git/modules that was there.
	added = append(added, g.git.Widen(g.git.ModuleTops())...)
	lines := g.undoAs(g.git, "", "git configuration", gitConfigWhy, added...)
	if err != nil {
		lines = append(lines, "git configuration of nested repositories not checked after the run ("+err.Error()+"): check every .git below the top for a config, hooks or a gitdir: line yourself")
	}
	return lines
}

const gitConfigWhy = "a subagent may not change the repository's git configuration (hooks, core.fsmonitor, filters, aliases and the like run programs in your next git command); allow it with agents.allow_config_changes = true in your own settings or BROOD_ALLOW_CONFIG_CHANGES=1"

const configWhy = "a subagent may not change brood's or Claude Code's configuration (.brood/, .claude/, .mcp.json, and yours in ~/.config/brood, ~/.claude, ~/.claude.json); allow it with agents.allow_config_changes = true in your own settings or BROOD_ALLOW_CONFIG_CHANGES=1"

// settle undoes (or, when allowed, reports) what the child changed and
// returns the result's lines about it. Call it after the child exited and
// its isolated patch, if any, was brought back.
func (g *configGuard) settle(ws *isolate.Workspace) []string {
	// The user's writes (WriteConfig) and this check do not interleave: a
	// write is on disk and in the snapshot, or neither.
	g.d.cfgMu.Lock()
	defer g.d.cfgMu.Unlock()
	defer g.forget() // last: what it must put back is put back
	defer g.done()
	var lines []string
	if ws != nil {
		rep := ws.Config()
		if len(rep.Refused) > 0 {
			// Allowed configuration, the refused are the programs.
			why := configWhy
			if g.allow {
				why = programsWhy
			}
			lines = append(lines, fmt.Sprintf("configuration changes NOT applied: %s — %s. The refused changes are in %s: review them and `git apply` them yourself if you want them",
				strings.Join(rep.Refused, ", "), why, rep.Patch))
		}
		if len(rep.Links) > 0 {
			lines = append(lines, "symbolic link(s) pointing outside the tree NOT landed (the whole patch is kept, not applied; review what they point to before you apply it): "+linkList(rep.Links))
		}
		if len(rep.Applied) > 0 {
			lines = append(lines, "configuration changed by the subagent (allowed by agents.allow_config_changes): "+strings.Join(rep.Applied, ", "))
		}
	}
	if g.err != nil {
		return append(lines, "configuration not watched ("+g.err.Error()+"): check .brood/, .claude/ and ~/.config/brood for changes yourself")
	}
	if g.before != nil {
		lines = append(lines, g.undo(g.before, "")...)
	}
	var found trust.Nested
	var err error
	switch {
	case g.nested != nil:
		n := <-g.nested
		found, err, g.nested = n.found, n.err, nil
		g.walkAfter = &n
	case g.walksAfter():
		root := g.walkRoot()
		found, err = g.walkTree(root)
		g.walkAfter = &nestedTops{root, found, err}
	}
	lines = append(lines, openedLine(g.openedBefore, found.Opened)...)
	lines = append(lines, g.undoNested(found.Config, err)...)
	if g.git != nil {
		lines = append(lines, g.undoGit(found.Git, err)...)
	}
	lines = append(lines, g.objectLines()...)
	lines = append(lines, g.indexLines()...)
	lines = append(lines, g.storeLines...)
	lines = append(lines, g.undoPrograms()...)
	if g.home != nil {
		lines = append(lines, g.undo(g.home, "~/")...)
	}
	if g.claude != nil {
		lines = append(lines, g.undo(g.claude, "~/")...)
	}
	return lines
}

// watched is one snapshot of configuration a child may not change:
// trust.ConfigState (files) or trust.ClaudeJSONState (keys of one file).
type watched interface {
	Changes() ([]string, error)
	Restore(names []string) ([]string, error)
}

// undo puts back what changed in one watched state (the project's, or the
// user's under their home, shown with prefix) and says so.
func (g *configGuard) undo(c watched, prefix string) []string {
	return g.undoAs(c, prefix, "configuration", configWhy)
}

// undoAs is undo with the kind of configuration named and why it is
// refused. A changed path under one of group is reported as that one.
func (g *configGuard) undoAs(c watched, prefix, kind, why string, group ...string) []string {
	changed, err := c.Changes()
	switch {
	case err != nil:
		return []string{kind + " not checked after the run (" + err.Error() + "): check " + cmp.Or(prefix, "the repository's "+kind) + " for changes yourself"}
	case len(changed) == 0:
		return nil
	}
	names := grouped(leaves(changed), group)
	for i := range names {
		names[i] = prefix + names[i]
	}
	if g.allow {
		return []string{kind + " changed by the subagent (allowed by agents.allow_config_changes): " + strings.Join(names, ", ")}
	}
	failed, err := c.Restore(changed)
	line := fmt.Sprintf("%s changes refused and undone: %s — %s", kind, strings.Join(names, ", "), why)
	if len(failed) > 0 || err != nil {
		line += fmt.Sprintf(". NOT undone (check them yourself): %s %v", strings.Join(failed, ", "), errText(err))
	}
	return []string{line}
}

// grouped reports each path under one of tops as that top, once.
func grouped(paths, tops []string) []string {
	var out []string
	for _, p := range paths {
		if i := slices.IndexFunc(tops, func(t string) bool { return p == t || strings.HasPrefix(p, t+"/") }); i >= 0 {
			p = tops[i]
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
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
// project's own agent file (a cloned repository's) gets none unless the
// user trusts the project (the one decision, Config.TrustProject) — else a
// repository could hand its agent the user's tokens.
func (d *Dispatcher) childEnvAllow(def *registry.Definition, want []string) ([]string, string) {
	if len(want) == 0 || def.Source != registry.SourceProject || d.trusts(def.Path) {
		return want, ""
	}
	return nil, fmt.Sprintf("env: %s not passed: %s is a project file, and the project is not trusted (run `brood trust`, or move the agent to ~/.config/brood/agents)", strings.Join(want, ", "), def.Path)
}

// trusts reports whether the user trusts the project file at path (an
// agent definition, .mcp.json): the root's decision, never the child's.
func (d *Dispatcher) trusts(path string) bool {
	if d.cfg.TrustProject != nil {
		return d.cfg.TrustProject(path)
	}
	return d.cfg.Grant.Trusts(d.cfg.ProjectRoot, path)
}

// objectLines say which loose objects, the repository's or a nested
// one's, the child wrote again with another content (they are removed),
// and which nested repositories' objects were not checked.
func (g *configGuard) objectLines() []string {
	var lines []string
	if r := g.objs.Replaced(); len(r) > 0 {
		lines = append(lines, "git objects rewritten by the subagent with another content and removed: "+strings.Join(r, ", ")+
			" — your git diff would have compared your files with the subagent's content instead of the committed one; `git fsck` names what is now missing")
	}
	if u := g.objs.Unchecked(); len(u) > 0 {
		lines = append(lines, "git objects of nested repositories not checked after the run (more than the guard records): "+strings.Join(u, ", ")+" — run `git fsck` in each")
	}
	return lines
}
