package spawn

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
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
// may also lead into the work root). A pass that saw everything before
// the writer and not after it (the writer made the tree too big, or a
// directory unreadable) rejects a done result as a link would (review20
// L9). A changed regular file with other names (a hard link) is named.
// It returns the result's lines about them.
func (d *Dispatcher) settleLinks(j *job, res *dispatch.Result, v *dispatch.Verdict, want dispatch.Expect, before []isolate.Links) []string {
	var lines []string
	var found, removed []isolate.Link
	var failed []string
	seen := map[string]bool{}
	shown := isolate.Resolved(want.Root)
	if want.Root != "" && len(want.Changed) > 0 {
		if shared := isolate.SharedFiles(want.Root, want.Changed); len(shared) > 0 {
			lines = append(lines, "files the subagent changed that have other names (hard links): "+strings.Join(shared, ", ")+
				" — a hard link to a file outside the tree shows what that file holds, and changes with it; check them")
		}
		f, r, x := settleAt(want.Root, want.Changed, "", shown, seen)
		found, removed, failed = append(found, f...), append(removed, r...), append(failed, x...)
	}
	var blind []string
	for i, b := range before {
		// Every link made or retargeted, wherever it is: ignored paths
		// and nested repositories included (the walks above see neither).
		after := isolate.TreeLinks(b.Root, 0)
		switch {
		case after.Unchecked != "" && b.Unchecked == "":
			blind = append(blind, b.Root+": "+after.Unchecked)
		case after.Unchecked != "" || b.Unchecked != "":
			lines = append(lines, "symbolic links NOT checked everywhere under "+b.Root+" after the subagent ran ("+
				cmpOr(after.Unchecked, b.Unchecked)+"): look for links it may have left pointing outside the tree yourself")
		}
		tree := ""
		if i > 0 {
			tree = before[0].Root
		}
		f, r, x := settleAt(b.Root, isolate.NewLinks(b, after), tree, shown, seen)
		found, removed, failed = append(found, f...), append(removed, r...), append(failed, x...)
	}
	if len(blind) > 0 {
		lines = append(lines, "symbolic links could NOT be checked after the subagent ran, though they could before it ("+
			strings.Join(blind, "; ")+"): it made that so; look for links it may have left pointing outside the tree yourself")
	}
	if len(found) > 0 {
		for _, l := range found {
			if !slices.Contains(res.FilesChanged, l.Path) {
				res.FilesChanged = append(res.FilesChanged, l.Path)
			}
		}
		var named []string
		if len(removed) > 0 {
			named = append(named, "removed: "+linkList(removed))
		}
		if len(failed) > 0 {
			named = append(named, "NOT removed (remove them yourself): "+strings.Join(failed, "; "))
		}
		why := "symbolic link(s) the subagent left pointing outside the tree, " + strings.Join(named, "; ")
		lines = append(lines, why+" — what they point to was never part of the change, and your next make or tool would follow them there"+
			" (`git checkout -- PATH` brings back a committed file a link replaced)")
	}
	if res.Status != dispatch.StatusDone || (len(found) == 0 && len(blind) == 0) {
		return lines
	}
	var because string
	if len(found) > 0 {
		because = fmt.Sprintf("it left %d symbolic link(s) pointing outside the tree (%s)", len(found), linkList(found))
		v.Rejected = "it left symbolic link(s) pointing outside the tree: " + linkList(found)
	} else {
		because = "it left the tree's symbolic links impossible to check (" + strings.Join(blind, "; ") + ")"
		v.Rejected = because
	}
	res.Status, res.ResumeHandle = dispatch.StatusRejected, j.env.TaskID
	res.Error = "rejected by its parent: " + because
	v.Status, v.Accepted, v.Error = res.Status, false, res.Error
	return lines
}

// settleAt removes the links among paths (relative to root) that leave
// root (and, given, lead not into tree), once each across roots (seen:
// absolute paths). The links it names carry their path relative to shown,
// or absolute when outside it.
func settleAt(root string, paths []string, tree, shown string, seen map[string]bool) (found, removed []isolate.Link, failed []string) {
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
	if len(links) == 0 {
		return nil, nil, nil
	}
	r, x := isolate.RemoveLinks(root, links)
	show := func(l isolate.Link) isolate.Link {
		abs := filepath.Join(isolate.Resolved(root), filepath.FromSlash(l.Path))
		if rel, err := filepath.Rel(shown, abs); err == nil && shown != "" && rel != ".." && !strings.HasPrefix(rel, "../") {
			l.Path = filepath.ToSlash(rel)
		} else {
			l.Path = abs
		}
		return l
	}
	for _, l := range links {
		found = append(found, show(l))
	}
	for _, l := range r {
		removed = append(removed, show(l))
	}
	return found, removed, x
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
