package spawn

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/trust"
)

// settleLinks is the in-place writer's share of what a writer's tree
// change may not carry (review18 R3): a symbolic link it made or
// retargeted whose target leaves the tree (isolate.EscapingLinks:
// absolute, a ".." past the top, into .git or .brood) is removed — the
// link, never what it points to — named on the result's Files changed and
// on a line of its own, and a done result is rejected with it, as an
// isolated writer's patch with such a link is kept out of the tree whole.
// before holds the link pass of each root the writer may write
// (isolate.WriterRoots: its work root, then each --add-dir, whose links
// may also lead into the work root); g's walk after the child gives the
// pass after it (linkPass). The passes are compared where both looked
// (isolate.CompareLinks). What the pass after could not see, it cannot
// vouch for: a done result is rejected whenever the pass after the
// writer is blind anywhere, whether the writer made it so (review20 L9)
// or the pass before was blind there too (review22 P2-3); a link out of
// the tree where only the pass after looked is named, not removed (it
// may be the user's), and rejects a done result too. A changed regular
// file with other names (a hard link) is named. It returns the result's
// lines about them.
func (d *Dispatcher) settleLinks(j *job, res *dispatch.Result, v *dispatch.Verdict, want dispatch.Expect, before []isolate.Links, g *configGuard) []string {
	var lines []string
	var f linkFindings
	seen := map[string]bool{}
	shown := isolate.Resolved(want.Root)
	if want.Root != "" && len(want.Changed) > 0 {
		if shared := isolate.SharedFiles(want.Root, want.Changed); len(shared) > 0 {
			lines = append(lines, "files the subagent changed that have other names (hard links): "+strings.Join(shared, ", ")+
				" — a hard link to a file outside the tree shows what that file holds, and changes with it; check them")
		}
		f.settle(settleAt(want.Root, want.Changed, "", shown, seen))
	}
	if g != nil && len(g.gitLinks) > 0 {
		var shownLinks []isolate.Link
		for _, l := range g.gitLinks {
			shownLinks = append(shownLinks, showLink(filepath.Dir(l.Path), shown, isolate.Link{Path: filepath.Base(l.Path), Target: l.Target, Why: l.Why}))
		}
		f.settle(shownLinks, shownLinks, nil)
	}
	for i, b := range before {
		// Every link made or retargeted, wherever it is: ignored paths
		// and nested repositories included (the walks above see neither).
		after := g.linkPass(b.Root, true)
		tree := ""
		if i > 0 {
			tree = before[0].Root
		}
		f.special(b.Root, shown, isolate.CompareSpecial(b, after), after.Special)
		made, unseen := isolate.CompareLinks(b, after)
		f.settle(settleAt(b.Root, made, tree, shown, seen))
		f.unseen = append(f.unseen, escapingAt(b.Root, unseen, tree, shown, seen)...)
		if blind := after.Blind(); blind != "" {
			where := b.Root + ": " + blind
			if slices.ContainsFunc(after.Unseen, func(u trust.Unseen) bool { return b.Sees(u.Dir) }) {
				f.blindNew = append(f.blindNew, where)
			} else {
				f.blindBoth = append(f.blindBoth, where)
			}
		}
	}
	for _, l := range f.found {
		if !slices.Contains(res.FilesChanged, l.Path) {
			res.FilesChanged = append(res.FilesChanged, l.Path)
		}
	}
	lines = append(lines, f.lines()...)
	if res.Status != dispatch.StatusDone {
		return lines
	}
	because, rejected := f.rejects()
	if because == "" {
		return lines
	}
	v.Rejected = rejected
	res.Status, res.ResumeHandle = dispatch.StatusRejected, j.env.TaskID
	res.Error = "rejected by its parent: " + because
	v.Status, v.Accepted, v.Error = res.Status, false, res.Error
	return lines
}

// linkFindings is what the link passes found over every root.
type linkFindings struct {
	found, removed []isolate.Link
	failed         []string
	// unseen are links out of the tree where only the pass after the
	// writer looked: named, not removed.
	unseen []isolate.Link
	// specials are the FIFOs, sockets and devices the writer left in the
	// tree (git lists none), removed ("path (type)"), and specialFailed
	// those that could not be.
	specials, specialFailed []string
	// blindNew and blindBoth are the roots (with where and why) the
	// pass after the writer could not see everywhere: where the pass
	// before could, and where it could not either.
	blindNew, blindBoth []string
}

// special removes the entries made (relative to root) that are neither
// files, directories nor links (types: their kinds), said relative to
// shown (redteam19 P3-3): a FIFO left in the user's tree blocks whoever
// reads it next, and git, so the parent's diff, never lists it.
func (f *linkFindings) special(root, shown string, made []string, types map[string]string) {
	if len(made) == 0 {
		return
	}
	removed, failed := isolate.RemoveSpecial(root, made)
	for _, p := range removed {
		f.specials = append(f.specials, showLink(root, shown, isolate.Link{Path: p}).Path+" ("+types[p]+")")
	}
	f.specialFailed = append(f.specialFailed, failed...)
}

func (f *linkFindings) settle(found, removed []isolate.Link, failed []string) {
	f.found, f.removed, f.failed = append(f.found, found...), append(f.removed, removed...), append(f.failed, failed...)
}

// lines are the result's lines about what the passes found.
func (f *linkFindings) lines() []string {
	var lines []string
	if len(f.blindNew) > 0 {
		lines = append(lines, "symbolic links could NOT be checked after the subagent ran, though they could before it ("+
			strings.Join(f.blindNew, "; ")+"): it made that so; look for links it may have left pointing outside the tree yourself")
	}
	if len(f.blindBoth) > 0 {
		lines = append(lines, "symbolic links could NOT be checked after the subagent ran, nor before it ("+strings.Join(f.blindBoth, "; ")+
			"): look there for links it may have left pointing outside the tree yourself, and make those directories readable to you (chmod u+rx)"+
			" or move them out of the tree, or run writers on this tree isolated (isolation: worktree), whose change is checked link by link")
	}
	if len(f.unseen) > 0 {
		lines = append(lines, "symbolic link(s) pointing outside the tree where the pass before the subagent could not look, NOT removed (they may be yours): "+
			linkList(f.unseen)+" — check each, and remove those it made")
	}
	if len(f.found) > 0 {
		var named []string
		if len(f.removed) > 0 {
			named = append(named, "removed: "+linkList(f.removed))
		}
		if len(f.failed) > 0 {
			named = append(named, "NOT removed (remove them yourself): "+strings.Join(f.failed, "; "))
		}
		why := "symbolic link(s) the subagent left pointing outside the tree, " + strings.Join(named, "; ")
		lines = append(lines, why+" — what they point to was never part of the change, and your next make or tool would follow them there"+
			" (`git checkout -- PATH` brings back a committed file a link replaced)")
	}
	if len(f.specials) > 0 {
		lines = append(lines, "special file(s) the subagent left in the tree, which git does not list and whoever reads them next would block on, removed: "+strings.Join(f.specials, ", "))
	}
	if len(f.specialFailed) > 0 {
		lines = append(lines, "special file(s) the subagent left in the tree (a FIFO, a socket or a device, which git does not list) NOT removed (remove them yourself): "+strings.Join(f.specialFailed, "; "))
	}
	return lines
}

// rejects says why a done result is rejected (because, for its error;
// rejected, for the verdict), "" when it is not.
func (f *linkFindings) rejects() (because, rejected string) {
	switch {
	case len(f.found) > 0:
		return fmt.Sprintf("it left %d symbolic link(s) pointing outside the tree (%s)", len(f.found), linkList(f.found)),
			"it left symbolic link(s) pointing outside the tree: " + linkList(f.found)
	case len(f.specialFailed) > 0:
		because = "it left special file(s) in the tree that could not be removed (" + strings.Join(f.specialFailed, "; ") + ")"
	case len(f.unseen) > 0:
		because = "symbolic link(s) point outside the tree where its parent could not look before it ran (" + linkList(f.unseen) + ")"
	case len(f.blindNew) > 0:
		because = "it left the tree's symbolic links impossible to check (" + strings.Join(f.blindNew, "; ") + ")"
	case len(f.blindBoth) > 0:
		because = "the tree's symbolic links could not be checked after it ran, nor before (" + strings.Join(f.blindBoth, "; ") +
			"), so links it may have left pointing outside the tree were not looked for"
	}
	return because, because
}

// settleAt removes the links among paths (relative to root) that leave
// root (and, given, lead not into tree), once each across roots (seen:
// absolute paths). The links it names carry their path relative to shown,
// or absolute when outside it.
func settleAt(root string, paths []string, tree, shown string, seen map[string]bool) (found, removed []isolate.Link, failed []string) {
	links := escaping(root, paths, tree, seen)
	if len(links) == 0 {
		return nil, nil, nil
	}
	r, x := isolate.RemoveLinks(root, links)
	for _, l := range links {
		found = append(found, showLink(root, shown, l))
	}
	for _, l := range r {
		removed = append(removed, showLink(root, shown, l))
	}
	return found, removed, x
}

// escapingAt names the links among paths that leave root as settleAt
// does, and removes none.
func escapingAt(root string, paths []string, tree, shown string, seen map[string]bool) []isolate.Link {
	var out []isolate.Link
	for _, l := range escaping(root, paths, tree, seen) {
		out = append(out, showLink(root, shown, l))
	}
	return out
}

// escaping are the links among paths (relative to root, each once across
// roots) that leave root and, given, lead not into tree.
func escaping(root string, paths []string, tree string, seen map[string]bool) []isolate.Link {
	var todo []string
	for _, p := range paths {
		if abs := filepath.Join(isolate.Resolved(root), filepath.FromSlash(p)); !seen[abs] {
			seen[abs] = true
			todo = append(todo, p)
		}
	}
	var links []isolate.Link
	for _, l := range isolate.EscapingLinks(root, todo) {
		if !isolate.IntoTree(root, l.Path, l.Target, tree) {
			links = append(links, l)
		}
	}
	return links
}

// showLink is l with its path relative to shown, or absolute when outside
// it.
func showLink(root, shown string, l isolate.Link) isolate.Link {
	abs := filepath.Join(isolate.Resolved(root), filepath.FromSlash(l.Path))
	if rel, err := filepath.Rel(shown, abs); err == nil && shown != "" && rel != ".." && !strings.HasPrefix(rel, "../") {
		l.Path = filepath.ToSlash(rel)
	} else {
		l.Path = abs
	}
	return l
}

// walkTree is the guard's walk of the tree at top for nested
// repositories, listing its links for the link pass besides: one walk
// of the tree serves both (issue 29), the project's own .brood left out
// of the links.
func (g *configGuard) walkTree(top string) (trust.Nested, error) {
	return trust.NestedWalk(top, trust.WalkOptions{Links: true, Skip: isolate.WalkSkip(top, g.stateDir())})
}

// stateDir is the project's own .brood, whose links the pass leaves out:
// brood's records and its children's task directories.
func (g *configGuard) stateDir() string {
	return filepath.Join(g.root, taskdir.StateDirName)
}

// holds reports whether the guard's walks cover root: the project root or
// a directory below it (the walk starts there or at the top of the
// repository holding it).
func (g *configGuard) holds(root string) bool {
	rel, err := filepath.Rel(isolate.Resolved(g.root), isolate.Resolved(root))
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// linkPass is the link pass of root, before the child or after it, out
// of the guard's walk when it covers root and did not fail, else a walk
// of root's own.
func (g *configGuard) linkPass(root string, after bool) isolate.Links {
	w := g.walkBefore
	if after {
		if g.walkAfter == nil && g.nested != nil {
			n := <-g.nested // settle never took it (it stopped early)
			g.nested, g.walkAfter = nil, &n
		}
		w = g.walkAfter
	}
	if w != nil {
		if l, ok := isolate.LinksWithin(root, w.root, w.found, w.err); ok {
			return l
		}
	}
	return isolate.TreeLinks(root, g.stateDir())
}

// linkPasses are the link passes of roots before the child, in their
// order: out of the guard's walk (linkPass) or, for those it does not
// cover, as they arrive on own.
func (g *configGuard) linkPasses(roots []string, own <-chan isolate.Links) []isolate.Links {
	out := make([]isolate.Links, len(roots))
	byRoot := map[string]isolate.Links{}
	for i, r := range roots {
		if g.holds(r) {
			out[i] = g.linkPass(r, false)
			continue
		}
		for {
			if l, ok := byRoot[r]; ok {
				out[i] = l
				break
			}
			l := <-own
			byRoot[l.Root] = l
		}
	}
	return out
}
