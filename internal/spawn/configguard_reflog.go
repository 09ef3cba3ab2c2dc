package spawn

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/isolate"
)

// clearReflogLinks removes, before brood's own `git update-ref name`
// (undoReplace) runs, every symbolic link on the way to the reference's
// reflog (common/logs/name, logs and its directories included): git appends to a
// reflog that exists, and deletes one, following links, and makes no
// link there itself, so a link the writer left there would have brood's
// git write out of the tree (review24 P1-1). A link the walk before the
// writer saw there with the same target is the user's: it is left, and
// false says not to run git for name. The removed links are kept for
// the link pass (gitLinks), which names them and rejects the result.
func (g *configGuard) clearReflogLinks(name string) bool {
	// logs itself first: a link there leads every reflog out of the tree.
	p := g.git.Common()
	for _, c := range append([]string{"logs"}, strings.Split(name, "/")...) {
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if err != nil {
			return true // nothing further along
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		t, err := os.Readlink(p)
		if err != nil || g.linkBefore(p, t) {
			return false
		}
		if err := os.Remove(p); err != nil {
			return false
		}
		g.gitLinks = append(g.gitLinks, isolate.Link{Path: p, Target: t, Why: "git would write this reference's reflog through it"})
		return true
	}
	return true
}

// linkBefore reports whether the walk before the writer saw a link at abs
// with target t.
func (g *configGuard) linkBefore(abs, t string) bool {
	w := g.walkBefore
	if w == nil || w.err != nil {
		return false
	}
	rel, err := filepath.Rel(isolate.Resolved(w.root), isolate.Resolved(filepath.Dir(abs)))
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return false
	}
	old, ok := w.found.Links[filepath.ToSlash(filepath.Join(rel, filepath.Base(abs)))]
	return ok && old == t
}
