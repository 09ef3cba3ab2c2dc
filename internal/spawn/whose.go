package spawn

import (
	"context"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
)

// Whose a change is: what the parent's walks see changed while a child
// ran is not always the child's doing (report21).

// itsRefs are the ref changes of the run (dispatch.RefChanges) to credit
// its child with: none when the parent's own record of its calls (held
// by Landlock) shows it ran nothing that could move a ref; they are then
// yours, a hook's or an editor's fetch, said on a note (report21).
func (s *spawn) itsRefs(refs []string) []string {
	env := s.j.env
	if len(refs) == 0 || s.prog == nil || !callsHeld(env) || s.before == nil || !s.prog.calls.ranNoCommand(env.Workspace, s.before.GitDirs) {
		return refs
	}
	env.Notes = append(env.Notes, "git refs changed while it ran, not by it (it ran no command: yours, a hook's or another process's): "+dispatch.RefsLine(refs, 50))
	return nil
}

// ignoredAside takes the ignored files out of a read-only child's changes
// (one without Landlock, whose tree is walked), saying them on a note: an
// editor or a build of yours writes ignored files (.idea/, build/) while
// it runs, and brood cannot tell whose they are, so they do not reject
// it (report21).
func (s *spawn) ignoredAside(ctx context.Context, before, after *dispatch.TreeState, changed []string) []string {
	ignored, others := dispatch.SplitIgnored(ctx, before, after, changed)
	if len(ignored) > 0 {
		s.j.env.Notes = append(s.j.env.Notes, "ignored files changed while it ran (by it, or by your editor or build meanwhile: brood cannot tell): "+strings.Join(ignored, ", "))
	}
	return others
}
