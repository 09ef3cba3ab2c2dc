package spawn

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/trust"
)

// A nested repository's packs (review 19 H2): an in-place writer writes a
// nested repository's .git/objects as the rest of the tree, so it can add
// a pack whose index maps a committed object's name to its own content
// (git reads packs before loose objects), or rewrite a pack there, and the
// user's `git diff` in that repository then shows nothing. Its packs are
// stamped before the run and checked after it as the top repository's are
// (configguard_store.go), for the first trust.MaxNestedStores nested
// repositories (those beyond are named as not checked with their loose
// objects: objectLines).

// nestedStore is one nested repository's packs before the spawn.
type nestedStore struct {
	rel    string // its .git directory, relative to the walk's root
	common string // the same, absolute
	packs  *trust.Packs
}

// watchNestedStores stamps the packs of the nested repositories whose
// .git directories are gitDirs (relative to top).
func (g *configGuard) watchNestedStores(top string, gitDirs []string) {
	for i, rel := range gitDirs {
		if i >= trust.MaxNestedStores {
			break
		}
		common := filepath.Join(top, filepath.FromSlash(rel))
		if fi, err := os.Lstat(filepath.Join(common, "objects")); err != nil || !fi.IsDir() {
			continue // none, or a link: not this repository's own store
		}
		g.nestedStores = append(g.nestedStores, nestedStore{rel: rel, common: common, packs: trust.SnapshotPacks(common)})
	}
}

// settleNestedStores checks the nested repositories' packs: a pack made
// since that fails `git verify-pack` is removed, a pack file rewritten
// with another content is named (a changed accelerator removed); the
// lines say so, naming each by its repository's path.
func (g *configGuard) settleNestedStores(ctx context.Context) []string {
	var bad, changed, removed []string
	for _, s := range g.nestedStores {
		c := s.packs.Check()
		for _, idx := range c.New {
			if _, err := gitx.Run(ctx, filepath.Dir(s.common), "verify-pack", s.common+"/"+idx); err != nil {
				for _, r := range removePack(s.common, idx) {
					bad = append(bad, s.rel+"/"+r)
				}
			}
		}
		for _, p := range c.Changed {
			changed = append(changed, s.rel+"/"+p)
		}
		for _, p := range c.Removed {
			removed = append(removed, s.rel+"/"+p)
		}
	}
	var lines []string
	if len(changed) > 0 {
		line := "git pack files of nested repositories rewritten by the subagent with another content: " + strings.Join(changed, ", ")
		if len(removed) > 0 {
			line += " (removed, git does without them: " + strings.Join(removed, ", ") + ")"
		}
		lines = append(lines, line+" — your git there may read the subagent's content for committed objects; run `git fsck --full` in each and restore the packs from another clone")
	}
	if len(bad) > 0 {
		lines = append(lines, "git packs made by the subagent in nested repositories that fail `git verify-pack` (an object's content does not hash to its name), removed: "+strings.Join(bad, ", ")+
			" — git reads the newest pack first, so your git there would have read the subagent's content for committed objects; `git fsck` names what is now missing")
	}
	return lines
}
