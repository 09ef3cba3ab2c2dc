package spawn

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/trust"
)

// The project configuration below the project root (C11 of review 15): a
// subdirectory with a .brood or a .git is a project root to the user's
// next brood there, which honours its untracked personal settings
// (.brood/settings.local.toml, .claude/settings.local.json: hooks) without
// asking for trust, and its .mcp.json once trusted. An in-place writer's
// Bash can make them anywhere; the walk for nested repositories (one walk
// of the tree's directories, before and after the child) finds them too,
// and what changed under them is undone as the top's configuration is.

// walkRoot is the directory the nested walk starts from: the work tree's
// top, or the project root outside a repository.
func (g *configGuard) walkRoot() string {
	if g.git != nil {
		return g.git.Root()
	}
	return g.root
}

// nestedConfigTops are those of found (relative to the walk's root) that
// are not the project root's own (the guard's before state holds them)
// nor under its .brood (brood's own records and task directories).
func (g *configGuard) nestedConfigTops(found []string) []string {
	own, err := filepath.Rel(g.walkRoot(), g.root)
	if err != nil || !filepath.IsLocal(own) && own != "." {
		return found
	}
	own = filepath.ToSlash(own)
	return slices.DeleteFunc(slices.Clone(found), func(t string) bool {
		for _, name := range []string{".brood", ".claude", ".mcp.json"} {
			if p := path.Join(own, name); t == p || name == ".brood" && strings.HasPrefix(t, p+"/") {
				return true
			}
		}
		return false
	})
}

// watchNested snapshots the project configuration below the root, found
// by the spawn's walk (nested, relative to walkRoot).
func (g *configGuard) watchNested(nested []string) {
	g.nestedCfg, g.nestedErr = trust.SnapshotNestedConfig(g.walkRoot(), g.nestedConfigTops(nested))
}

// undoNested undoes what the child changed in the project configuration
// below the root: found is the after-run walk's (nil when it failed, err).
func (g *configGuard) undoNested(found []string, err error) []string {
	if g.nestedCfg == nil || g.nestedErr != nil {
		if g.nestedErr == nil {
			return nil
		}
		err = g.nestedErr
	}
	if err != nil {
		return []string{"configuration of nested project roots not checked after the run (" + err.Error() + "): check every .brood, .claude and .mcp.json below the project root yourself"}
	}
	added := g.nestedCfg.Widen(g.nestedConfigTops(found))
	return g.undoAs(g.nestedCfg, "", "configuration", configWhy, added...)
}

// openedLine names the directories the walks gave their owner's read bit
// back (trust.Nested.Opened): before the run (yours) and after it (the
// subagent's).
func openedLine(before, after []string) []string {
	const why = " — git uses a repository in a directory it can search but not list, so brood lists every directory it checks for one"
	var lines []string
	if len(before) > 0 {
		lines = append(lines, "directories of yours that could be searched but not listed, given their read bit back before the run: "+strings.Join(before, ", ")+why)
	}
	if len(after) > 0 {
		lines = append(lines, "directories made unreadable (search only) by the subagent, given their read bit back: "+strings.Join(after, ", ")+why)
	}
	return lines
}

// nestedRepos are the nested repositories (untracked clones with their
// own .git directory, submodules with a .git file) the walk before the
// child found below the work tree's top, slash-separated and relative to
// it; none under the project's .brood (brood's own records and copies).
func (g *configGuard) nestedRepos() []string {
	if g == nil || g.walkBefore == nil || g.walkBefore.err != nil {
		return nil
	}
	found := g.walkBefore.found
	var dirs []string
	for _, d := range found.GitDirs {
		dirs = append(dirs, path.Dir(d))
	}
	for _, t := range found.Git {
		if path.Base(t) == ".git" { // a .git file's top (nestedTopsOf)
			dirs = append(dirs, path.Dir(t))
		}
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	return slices.DeleteFunc(dirs, func(d string) bool {
		return d == "." || d == ".brood" || strings.HasPrefix(d, ".brood/") || strings.Contains("/"+d+"/", "/.git/")
	})
}
