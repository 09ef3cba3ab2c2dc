package spawn

// What the Task result says of a writer's isolation: the copy, the base
// that moved under it, the links it made.

import (
	"fmt"
	"strings"

	"github.com/broodhq/brood/internal/isolate"
	"github.com/broodhq/brood/internal/textline"
)

// describeIsolation says in one line what happened to an isolated child's
// changes.
func describeIsolation(mode isolate.Mode, o *isolate.Outcome) string {
	if o == nil {
		return ""
	}
	msg := describeOutcome(mode, o)
	if moved := describeBaseMoved(o); moved != "" {
		msg += " " + moved
	}
	return msg
}

// maxMovedNamed bounds the paths a base-moved note names.
const maxMovedNamed = 10

// describeBaseMoved says which files of the parent's tree changed beneath
// an isolated child while it ran, and what that meant for its patch.
func describeBaseMoved(o *isolate.Outcome) string {
	if len(o.BaseMoved) == 0 {
		return ""
	}
	named := o.BaseMoved[:min(len(o.BaseMoved), maxMovedNamed)]
	list := strings.Join(named, ", ")
	if more := len(o.BaseMoved) - len(named); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	touched := map[string]bool{}
	for _, f := range o.Files {
		touched[f] = true
	}
	var both []string
	for _, f := range o.BaseMoved {
		if touched[f] {
			both = append(both, f)
		}
	}
	seen := "its copy was frozen at its start, so it did not see them"
	if !o.Frozen {
		seen = "it may have read the newer versions (an overlay copy follows your tree)"
	}
	msg := fmt.Sprintf("Base moved: %d file(s) of your tree changed while the child ran (your edits or another task's): %s; %s.", len(o.BaseMoved), list, seen)
	switch {
	case len(o.Files) == 0:
	case o.Conflict != "":
		msg += " Its patch, taken against the tree at its start, no longer applies whole, so none of it was applied."
	case len(both) > 0:
		msg += fmt.Sprintf(" Its patch, taken against the tree at its start, also touches %s and still applied whole.", strings.Join(both[:min(len(both), maxMovedNamed)], ", "))
	default:
		msg += " Its patch, taken against the tree at its start, touches none of them and applied whole."
	}
	return msg
}

// describeOutcome says what became of the patch.
func describeOutcome(mode isolate.Mode, o *isolate.Outcome) string {
	switch {
	case o.Note != "" && mode == isolate.ModeNone:
		return o.Note
	case len(o.Links) > 0:
		return fmt.Sprintf("%s copy: the changes were NOT applied: the patch makes symbolic link(s) pointing outside your tree (%s), and what they point to was never part of the change. The child's copy is kept at %s and its patch at %s; nothing in your tree changed.",
			mode, textline.Line(linkList(o.Links), 600), o.KeptAt, o.Patch)
	case len(o.Partial) > 0:
		return fmt.Sprintf("%s copy: the changes were NOT applied, and the landing failed partway: %s. The child's copy is kept at %s and its patch at %s.",
			mode, textline.Line(o.Conflict, 600), o.KeptAt, o.Patch)
	case strings.Contains(o.Conflict, " failed partway "):
		return fmt.Sprintf("%s copy: the changes were NOT applied: %s. The child's copy is kept at %s and its patch at %s.",
			mode, textline.Line(o.Conflict, 600), o.KeptAt, o.Patch)
	case len(o.Refused) > 0:
		return fmt.Sprintf("%s copy: the changes were NOT applied (refused: it writes %s, which your Edit or Write deny rules forbid): the whole patch was refused, the files no rule forbids too. The child's copy is kept at %s and its patch at %s; nothing in your tree changed.",
			mode, textline.Line(strings.Join(o.Refused, ", "), 600), o.KeptAt, o.Patch)
	case o.Conflict != "":
		return fmt.Sprintf("%s copy: the changes were NOT applied (conflict: %s). The child's copy is kept at %s and its patch at %s; nothing in your tree changed.",
			mode, textline.Line(o.Conflict, 120), o.KeptAt, o.Patch)
	case len(o.Files) == 0:
		return fmt.Sprintf("%s copy: no changes to bring back", mode)
	case o.Applied && o.Merged:
		return fmt.Sprintf("%s copy: %d file(s) merged into your tree with your concurrent edits (not staged): %s", mode, len(o.Files), strings.Join(o.Files, ", "))
	case o.Applied:
		return fmt.Sprintf("%s copy: %d file(s) applied to your tree as one patch (not staged): %s", mode, len(o.Files), strings.Join(o.Files, ", "))
	}
	return fmt.Sprintf("%s copy: the changes were not applied", mode)
}

// linkList names links as "path -> target (why)", comma-separated.
func linkList(links []isolate.Link) string {
	names := make([]string, len(links))
	for i, l := range links {
		names[i] = l.String()
	}
	return strings.Join(names, ", ")
}
