package trust

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// gitConfigParts are the entries of a git directory that configure what
// git runs or how it reads the tree (config, hooks, attributes and
// excludes under info/, and commondir, which makes another directory's
// config and hooks this repository's), or hold programs git runs when the
// user goes on with an operation in progress (a rebase's or a
// cherry-pick's todo: `exec` lines), as opposed to the objects, refs,
// index and logs a commit writes.
var gitConfigParts = []string{"config", "config.worktree", "commondir", "hooks", "info", "rebase-merge", "rebase-apply", "sequencer"}

// gitStoreParts are the entries of a git directory that change which
// objects git reads for a name without a change git shows: a replace ref
// (the user's `git diff` then shows the replacement, not the file's
// change), another object store (alternates, http-alternates), and the
// history's cut (shallow, info/grafts: info is among gitConfigParts). A
// child's change to one is undone as configuration is.
var gitStoreParts = []string{"objects/info/alternates", "objects/info/http-alternates", "shallow", "refs/replace"}

// maxModuleDepth bounds moduleTops' walk (a submodule's submodules).
const maxModuleDepth = 8

// moduleTops are the paths that hold the configuration of the submodules'
// git directories under common/modules: the directory itself when it does
// not exist (what a child makes there is removed: a git directory with
// hooks the user's `git submodule update --init` would take up), else
// each git directory's gitConfigParts and gitStoreParts (its config,
// hooks, info, replace refs, alternates; its own modules the same way).
// Absolute paths.
func moduleTops(common string) []string {
	var tops []string
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		mods := filepath.Join(dir, "modules")
		if _, err := os.Lstat(mods); errors.Is(err, fs.ErrNotExist) {
			tops = append(tops, mods)
			return
		}
		if depth >= maxModuleDepth {
			tops = append(tops, mods)
			return
		}
		_ = filepath.WalkDir(mods, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || p == mods {
				return nil
			}
			if _, err := os.Lstat(filepath.Join(p, "HEAD")); err != nil {
				return nil // a directory of a submodule's name with a slash
			}
			for _, part := range gitConfigParts {
				tops = append(tops, filepath.Join(p, part))
			}
			for _, part := range gitStoreParts {
				tops = append(tops, filepath.Join(p, filepath.FromSlash(part)))
			}
			walk(p, depth+1)
			return filepath.SkipDir
		})
	}
	walk(common, 0)
	return tops
}

// SnapshotGit is SnapshotPaths of a repository's git configuration
// (GitConfigTops and more tops, from the work tree at top) that also
// remembers its common git dir, for ModuleTops after the run.
func SnapshotGit(top, common string, tops []string) (*ConfigState, error) {
	c, err := SnapshotPaths(top, tops)
	if c != nil {
		c.common = common
	}
	return c, err
}

// Common is the common git dir SnapshotGit was given ("" for others).
func (c *ConfigState) Common() string { return c.common }

// ModuleTops are the submodules' configuration tops (moduleTops) as they
// are now, relative to the state's root: for Widen after a run, so that a
// git directory a child made in a .git/modules that existed has its
// config and hooks removed.
func (c *ConfigState) ModuleTops() []string {
	if c.common == "" {
		return nil
	}
	var out []string
	for _, m := range moduleTops(c.common) {
		if r, err := filepath.Rel(c.root, m); err == nil {
			out = append(out, filepath.ToSlash(r))
		}
	}
	return out
}

// worktreeParts are those of gitConfigParts a linked work tree keeps in
// its own git directory.
var worktreeParts = []string{"config.worktree", "commondir", "rebase-merge", "rebase-apply", "sequencer"}

// IsGitConfigPath reports whether a repository-relative, slash-separated
// path is git's configuration: .git/config, .git/config.worktree,
// .git/commondir, anything under .git/hooks/, .git/info/, .git/rebase-merge/,
// .git/rebase-apply/ or .git/sequencer/, or a .gitmodules file — at any
// depth. A child's change to one is a configuration change (it would run
// programs in the user's next git command), never part of its work.
func IsGitConfigPath(rel string) bool {
	segs := strings.Split(strings.Trim(filepath.ToSlash(rel), "/"), "/")
	for i, s := range segs {
		if s == ".git" && i+1 < len(segs) && slices.Contains(gitConfigParts, segs[i+1]) {
			return true
		}
	}
	return segs[len(segs)-1] == ".gitmodules"
}

// IsGitGuardedPath is the tool guard's wider rule for a path a command
// names (slash-separated, relative): a .git itself (the directory, or a
// worktree's or submodule's pointer file), or anything under one with a
// segment among gitConfigParts or "gitdir" below it (also a submodule's
// or a worktree's: .git/modules/x/config, .git/worktrees/x/gitdir).
// .gitmodules is not in it: a child may add a submodule; the change is
// judged as configuration afterwards (IsGitConfigPath).
func IsGitGuardedPath(rel string) bool {
	segs := strings.Split(filepath.ToSlash(rel), "/")
	for i, s := range segs {
		if s != ".git" {
			continue
		}
		if i == len(segs)-1 {
			return true
		}
		for _, t := range segs[i+1:] {
			if t == "gitdir" || slices.Contains(gitConfigParts, t) {
				return true
			}
		}
	}
	return false
}

// GitConfigTops are the paths, relative to a work tree's top, that hold
// its git configuration: common is the common git dir (config, hooks/,
// info/, a commondir made there, an operation's state), gitDir the work
// tree's own (worktreeParts, when it is a linked worktree), and .gitmodules at the top. Directories outside top
// come as relative paths with "..". (Not common/brood: brood keeps no
// record there, taskdir.CheckoutState; one a child makes is not
// configuration, and none of brood's is taken for a child's change.)
func GitConfigTops(top, gitDir, common string) []string {
	var tops []string
	rel := func(p string) string {
		r, err := filepath.Rel(top, p)
		if err != nil {
			return p
		}
		return filepath.ToSlash(r)
	}
	for _, part := range gitConfigParts {
		tops = append(tops, rel(filepath.Join(common, part)))
	}
	for _, part := range gitStoreParts {
		tops = append(tops, rel(filepath.Join(common, filepath.FromSlash(part))))
	}
	for _, m := range moduleTops(common) {
		tops = append(tops, rel(m))
	}
	if gitDir != "" && gitDir != common {
		for _, part := range worktreeParts {
			tops = append(tops, rel(filepath.Join(gitDir, part)))
		}
	}
	return append(tops, ".gitmodules")
}

// SnapshotPaths reads everything under the given paths of root (files,
// directories, links, none followed) as configuration a child may not
// change: what SnapshotConfig does for brood's own, for any list (a
// repository's git configuration, GitConfigTops).
func SnapshotPaths(root string, tops []string) (*ConfigState, error) {
	return snapshot(&ConfigState{root: root, tops: tops, keep: keepsAll, kind: keepAll})
}

// NestedGitTops are the paths, relative to top, that hold the git
// configuration of every repository nested in the work tree: for each
// `.git` below top (top's own left out) its gitConfigParts and
// gitStoreParts (a user's `git diff --submodule=diff` or recursing status
// reads a nested repository's replace refs and alternates) when it is a
// directory, the `.git` itself when it is a file or a link (a "gitdir:"
// line can point anywhere a child could write), and the .gitmodules
// beside it. A user's `git status` recurses into a nested repository
// committed as a gitlink and runs what its configuration names.
// Directories that cannot be searched are passed over (nor can the
// user's git go into them); one that can be searched but not listed is
// the user's own given its read bit back, or fails the walk
// (nestedWalk.unreadable); links are not followed.
func NestedGitTops(top string) ([]string, error) {
	tops, err := nestedGitTops(top)
	if err != nil {
		return nil, fmt.Errorf("nested repositories: %w", err)
	}
	return tops, nil
}

// nestedTopsOf appends to tops those of one `.git` found at rel (slash
// separated, below the top), a directory or not.
func nestedTopsOf(tops []string, rel string, isDir bool) []string {
	tops = append(tops, path.Join(path.Dir(rel), ".gitmodules"))
	if !isDir {
		return append(tops, rel)
	}
	for _, part := range gitConfigParts {
		tops = append(tops, rel+"/"+part)
	}
	for _, part := range gitStoreParts {
		tops = append(tops, rel+"/"+part)
	}
	return tops
}

// Widen adds tops to the state as paths that held nothing when it was
// taken (a nested repository made since): what is under them now is a
// change, and Restore removes it. It returns those of tops it did not
// cover yet.
func (c *ConfigState) Widen(tops []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var added []string
	for _, t := range tops {
		if !slices.Contains(c.tops, t) {
			c.tops = append(c.tops, t)
			added = append(added, t)
		}
	}
	return added
}
