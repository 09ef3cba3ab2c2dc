package spawn

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/textline"
	"github.com/broodhq/brood/internal/trust"
)

// The object store beyond loose objects (C5 of review 15): replace refs
// in packed-refs or a reftable (the loose refs/replace directory is held
// read-only in the writer's view, but git reads replace refs from
// wherever refs are stored), and packs rewritten in place or added with
// an index that maps a committed object's name to another content. Each
// makes the user's `git diff` compare a file with the child's content.

// replaceRefs lists the repository's replace refs with their targets,
// however they are stored.
func replaceRefs(ctx context.Context, top string) (map[string]string, error) {
	out, err := gitx.Run(ctx, top, "for-each-ref", "--format=%(refname) %(objectname)", "refs/replace/")
	if err != nil {
		return nil, err
	}
	refs := map[string]string{}
	for line := range strings.Lines(out) {
		if name, oid, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			refs[name] = oid
		}
	}
	return refs, nil
}

// watchStore records the replace refs and the packs before the spawn.
func (g *configGuard) watchStore(ctx context.Context) {
	if g.git == nil || g.git.Common() == "" {
		return
	}
	g.packs = trust.SnapshotPacks(g.git.Common())
	g.worktrees = worktreeDirs(g.git.Common())
	g.replace, g.replaceErr = replaceRefs(ctx, g.git.Root())
}

// settleStore puts the replace refs back as they were, removes what
// trust.Packs.Check removes, verifies the packs made since (`git
// verify-pack` re-hashes every object of one), and keeps the lines that
// say so for settle.
func (g *configGuard) settleStore(ctx context.Context) {
	if g != nil && !g.nestedDone {
		g.nestedDone = true
		g.storeLines = append(g.storeLines, g.settleNestedStores(ctx)...)
	}
	if g == nil || g.git == nil || g.packs == nil || g.storeDone {
		return
	}
	g.storeDone = true
	top := g.git.Root()
	if g.replaceErr == nil {
		g.storeLines = append(g.storeLines, g.undoReplace(ctx, top)...)
	}
	g.storeLines = append(g.storeLines, g.undoWorktrees()...)
	c := g.packs.Check()
	var bad []string
	for _, idx := range c.New {
		if _, err := gitx.Run(ctx, top, "verify-pack", g.git.Common()+"/"+idx); err != nil {
			bad = append(bad, removePack(g.git.Common(), idx)...)
		}
	}
	if len(c.Changed) > 0 {
		line := "git pack files rewritten by the subagent with another content: " + strings.Join(c.Changed, ", ")
		if len(c.Removed) > 0 {
			line += " (removed, git does without them: " + strings.Join(c.Removed, ", ") + ")"
		}
		g.storeLines = append(g.storeLines, line+" — your git may read the subagent's content for committed objects; run `git fsck --full` and restore the packs from another clone")
	}
	if len(bad) > 0 {
		g.storeLines = append(g.storeLines, "git packs made by the subagent that fail `git verify-pack` (an object's content does not hash to its name), removed: "+strings.Join(bad, ", ")+
			" — git reads the newest pack first, so your git would have read the subagent's content for committed objects; `git fsck` names what is now missing")
	}
}

// undoReplace deletes the replace refs made since the spawn and puts back
// those changed or deleted.
func (g *configGuard) undoReplace(ctx context.Context, top string) []string {
	now, err := replaceRefs(ctx, top)
	if err != nil {
		return []string{"git replace refs not checked after the run (" + err.Error() + "): run `git for-each-ref refs/replace/` and delete any you did not make"}
	}
	var undone, failed []string
	for _, name := range slices.Sorted(maps.Keys(now)) {
		if old, ok := g.replace[name]; ok && old == now[name] {
			continue
		}
		args := []string{"update-ref", "-d", name}
		if old, ok := g.replace[name]; ok {
			args = []string{"update-ref", name, old}
		}
		if !g.clearReflogLinks(name) {
			failed = append(failed, name+" (a link of yours on the way to its reflog)")
			continue
		}
		if _, err := gitx.Run(ctx, top, args...); err != nil {
			failed = append(failed, name)
			continue
		}
		undone = append(undone, name)
	}
	for _, name := range slices.Sorted(maps.Keys(g.replace)) {
		if _, ok := now[name]; ok {
			continue
		}
		if !g.clearReflogLinks(name) {
			failed = append(failed, name+" (a link of yours on the way to its reflog)")
			continue
		}
		if _, err := gitx.Run(ctx, top, "update-ref", name, g.replace[name]); err != nil {
			failed = append(failed, name)
			continue
		}
		undone = append(undone, name)
	}
	if len(undone)+len(failed) == 0 {
		return nil
	}
	line := "git replace refs changed by the subagent (in packed-refs or the reftable) and put back: " + strings.Join(undone, ", ") +
		" — with them your git diff shows the replacement, not the file's change"
	if len(failed) > 0 {
		line += ". NOT put back (check `git for-each-ref refs/replace/` yourself): " + strings.Join(failed, ", ")
	}
	return []string{line}
}

// worktreeDirs lists the linked work trees' git directories under
// common/worktrees.
func worktreeDirs(common string) []string {
	ents, err := os.ReadDir(filepath.Join(common, "worktrees"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// undoWorktrees removes the linked work trees' git directories made
// since the spawn (.git/worktrees is held read-only only when it was
// there: a writer that delegates has its isolated children's work trees
// registered in it), except those of brood's own work trees (their gitdir
// file names an existing .git under common/brood-worktrees: a delegating
// writer's children's). Such a directory's commondir, config.worktree and hooks
// would be git's configuration to whoever runs git in the work tree its
// gitdir names.
func (g *configGuard) undoWorktrees() []string {
	common := g.git.Common()
	own := filepath.Join(common, "brood-worktrees") + string(filepath.Separator)
	var removed []string
	for _, name := range worktreeDirs(common) {
		if slices.Contains(g.worktrees, name) {
			continue
		}
		dir := filepath.Join(common, "worktrees", name)
		at := ""
		if b, err := os.ReadFile(filepath.Join(dir, "gitdir")); err == nil {
			gd := filepath.Clean(strings.TrimSpace(string(b)))
			if strings.HasPrefix(gd, own) && exists(gd) {
				continue
			}
			// Where the work tree is (its .git file's directory): a
			// writer may add one wherever it may write, out of the tree
			// (review commithide P3-1). Its words: quoted.
			at = fmt.Sprintf(" (its work tree %q)", textline.Line(filepath.Dir(gd), 200))
		}
		if os.RemoveAll(dir) == nil {
			removed = append(removed, ".git/worktrees/"+name+at)
		}
	}
	if len(removed) == 0 {
		return nil
	}
	return []string{"git configuration changes refused and undone: " + strings.Join(removed, ", ") + " (a linked work tree's git directory the subagent made) — " + gitConfigWhy}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// removePack removes the pack whose index is idx (under common) and the
// files beside it, and returns idx, with " (NOT removed)" when a file of
// it stays.
func removePack(common, idx string) []string {
	base := strings.TrimSuffix(filepath.Join(common, idx), ".idx")
	left := false
	for _, ext := range []string{".pack", ".rev", ".bitmap", ".mtimes", ".idx"} {
		if err := os.Remove(base + ext); err != nil && !os.IsNotExist(err) {
			left = true
		}
	}
	if left {
		return []string{idx + " (NOT removed)"}
	}
	return []string{idx}
}
