package isolate

import (
	"path/filepath"
	"slices"

	"github.com/broodhq/brood/internal/taskdir"
)

// A writer whose tree holds the project's .brood/dispatch (an in-place
// writer, an overlay child) has a Landlock rule on that whole tree, which
// grants reading beneath it whatever its hidden list says: the other
// tasks' envelopes, transcripts and results. Its own mount namespace
// covers the dispatch directory instead: an empty read-only tmpfs over it
// holding only a mount point for the child's own task directory (at its
// path beneath the dispatch directory: <id>, or nested in its parent's,
// <parent id>/tasks/<id>), bound back over it (coverTasks). The cost is
// three mounts however many tasks there are, and a task made after the
// spawn is not seen either. A child that delegates makes its own
// children's directories in its own (taskdir.Tasks): it is covered the
// same way.

// otherTasks is the dispatch directory to cover for a child whose own
// task directory is own, in a tree at root: the dispatch directory that
// holds own (taskdir.SplitTaskPath), when it is beneath root, and kept
// is not it nor holds it; "" otherwise.
func otherTasks(root, own string, kept []string) string {
	if own == "" {
		return ""
	}
	tasks, _, ok := taskdir.SplitTaskPath(own)
	if !ok || !within(root, tasks) || tasks == root {
		return ""
	}
	if slices.ContainsFunc(kept, func(k string) bool { return within(k, tasks) }) {
		return ""
	}
	return tasks
}

// CoveringOtherTasks is v with the dispatch directory holding the child's
// own task directory own covered (otherTasks), for an in-place writer of
// the tree at root; kept are the other directories it writes.
func (v View) CoveringOtherTasks(root, own string, kept []string) View {
	if t := otherTasks(root, own, kept); t != "" && slices.Contains(v.Writable, own) {
		v.Tasks, v.Own = t, own
	}
	return v
}

// rootRecords are the root's own records in the project whose dispatch
// directory is tasks (its sibling directories in .brood): sessions, the
// root's transcripts (whatever the unconfined root read, every task's
// result), records (owner records, verdicts, kill records, summaries,
// sent messages), outputs (the root's spilled tool outputs) and
// workflows (workflow runs: their journals hold every call's inputs and
// result). No child reads them (review 18 X2); none needs them: a
// workflow call's inputs reach its child in its envelope's prompt, and a
// child spills its own outputs into its task directory. A delegating
// child's dispatcher keeps its children's records in its own task
// directory and finds a user's kill record of a grandchild unread (its
// status then says killed, not by whom). Hidden for a Landlock policy
// (childHidden), covered whole in a writer's mount namespace (coverEmpty)
// where its tree's rule would read them.
func rootRecords(tasks string) []string {
	state := filepath.Dir(tasks)
	return []string{filepath.Join(state, "sessions"), filepath.Join(state, "records"), filepath.Join(state, "outputs"), filepath.Join(state, "workflows")}
}

// CoveringRootRecords is v with the root's records (rootRecords) beside
// the dispatch directory tasks covered, where they are beneath root, and
// the known projects' state directories nested in root (nestedProjects).
func (v View) CoveringRootRecords(root, tasks string) View {
	for _, p := range append(rootRecords(tasks), nestedProjects(root, tasks)...) {
		if within(root, p) && p != root {
			v.Covered = append(v.Covered, p)
		}
	}
	return v
}
