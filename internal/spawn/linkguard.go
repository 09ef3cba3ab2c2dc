package spawn

import (
	"cmp"
	"fmt"
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
// A changed regular file with other names (a hard link) is named. It
// returns the result's lines about them.
func (d *Dispatcher) settleLinks(j *job, res *dispatch.Result, v *dispatch.Verdict, want dispatch.Expect, before *isolate.Links) []string {
	root, paths := want.Root, want.Changed
	var lines []string
	if before != nil {
		// Every link made or retargeted, wherever it is: ignored paths
		// and nested repositories included (the walks above see neither).
		after := isolate.TreeLinks(before.Root, 0)
		root = before.Root
		for _, p := range isolate.NewLinks(*before, after) {
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
		if why := cmp.Or(after.Unchecked, before.Unchecked); why != "" {
			lines = append(lines, "symbolic links NOT checked everywhere after the subagent ran ("+why+
				"): look for links it may have left pointing outside the tree yourself")
		}
	}
	if root == "" || len(paths) == 0 {
		return lines
	}
	if shared := isolate.SharedFiles(root, want.Changed); len(shared) > 0 {
		lines = append(lines, "files the subagent changed that have other names (hard links): "+strings.Join(shared, ", ")+
			" — a hard link to a file outside the tree shows what that file holds, and changes with it; check them")
	}
	links := isolate.EscapingLinks(root, paths)
	if len(links) == 0 {
		return lines
	}
	removed, failed := isolate.RemoveLinks(root, links)
	for _, l := range links {
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
	if res.Status == dispatch.StatusDone {
		res.Status, res.ResumeHandle = dispatch.StatusRejected, j.env.TaskID
		res.Error = fmt.Sprintf("rejected by its parent: it left %d symbolic link(s) pointing outside the tree (%s)", len(links), linkList(links))
		v.Status, v.Accepted, v.Error, v.Rejected = res.Status, false, res.Error, "it left symbolic link(s) pointing outside the tree: "+linkList(links)
	}
	return lines
}
