package isolate

import (
	"fmt"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/tool"
)

// parentNoteHead and parentNoteMid frame the rules ParentNote names.
const (
	parentNoteHead = "Read deny rules "
	parentNoteMid  = " are not held by the kernel sandbox for this child ("
)

// IsParentNote reports whether n, one of a task's notes (the parent's
// own: dispatch.Envelope.Notes), is a ReadDeny.ParentNote.
func IsParentNote(n string) bool {
	return strings.HasPrefix(n, parentNoteHead) && strings.Contains(n, parentNoteMid)
}

// maxNamedRules is how many of a child's Read deny rules ParentNote names.
const maxNamedRules = 4

// ParentNote is the line the parent's Task result carries (a Note, in
// brood's words, outside the child's report) when the kernel does not
// hold env's Read deny rules for its child (d is ChildPolicy's): which
// rules are then judged per command only, and what that means where the
// child's commands are not judged. "" where the kernel holds them, or
// there are none. The child's own result says it too (its sandbox line),
// but that is the child's to write.
func (d ReadDeny) ParentNote(env *dispatch.Envelope) string {
	if d.Held {
		return ""
	}
	var rules []string
	for _, r := range env.Permissions.Deny {
		if hasReadDeny([]string{r}) {
			rules = append(rules, fmt.Sprintf("%q", r))
		}
	}
	if len(rules) == 0 {
		return ""
	}
	named := strings.Join(rules[:min(len(rules), maxNamedRules)], ", ")
	if n := len(rules) - maxNamedRules; n > 0 {
		named += fmt.Sprintf(" and %d more", n)
	}
	s := fmt.Sprintf(parentNoteHead+"%s"+parentNoteMid+"%q): its commands are checked against them one by one, "+
		"so one that names a denied file is refused, but one that computes the path (a script, python3 -c) is not", named, d.Why)
	if env.Permissions.Mode == string(tool.ModeBypass) {
		return s + ", and under bypassPermissions (this run's mode) every such command runs: it may have read those files, and its report may hold their content"
	}
	return s + "; under a rule allowing all of Bash or an interpreter, or bypassPermissions, it can read those files"
}
