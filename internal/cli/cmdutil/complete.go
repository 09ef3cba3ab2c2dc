package cmdutil

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/shortid"
	"github.com/broodhq/brood/internal/taskdir"
)

// TaskIDs lists the project's task ids, top-level and nested (a
// subagent's own children's), oldest first.
func (f *Factory) TaskIDs() []string {
	ids, _ := taskdir.Open(f.ProjectRoot).TaskIDs()
	slices.Sort(ids)
	return slices.Compact(ids)
}

// ResolveTaskID turns what the user typed (an id, a unique prefix, tail
// or part of one, any case, a clipped id ending in "…") into a task id: the
// one task-id resolver of every `brood tasks` verb. An id no task has is
// refused naming the close one, if one stands out.
func (f *Factory) ResolveTaskID(id string) (string, error) {
	ids := f.TaskIDs()
	got, err := ResolveID("task", id, ids)
	if err != nil && !strings.Contains(err.Error(), " is ambiguous ") {
		return "", fmt.Errorf("no task %s under %s (%s%s)", strings.TrimSpace(id), dispatch.Root(f.ProjectRoot), f.DidYouMean(id), f.LocalTasksHint())
	}
	return got, err
}

// DidYouMean is "did you mean ID? " for the project's task id q is close
// to (shortid.Closest), "" when none stands out.
func (f *Factory) DidYouMean(q string) string {
	if near := shortid.Closest(q, f.TaskIDs()); near != "" {
		return "did you mean " + near + "? "
	}
	return ""
}

// LocalTasksHint says where this project's task ids are listed, true of
// this project: `brood tasks --all` lists them, when it has any. It says
// nothing of the fleet's, which are not kept here.
func (f *Factory) LocalTasksHint() string {
	if len(f.TaskIDs()) == 0 {
		return "this project has no tasks"
	}
	return "brood tasks --all lists this project's"
}

// SessionIDs lists the project's root sessions this user's brood made
// (session.Mine: never one a repository shipped), oldest first.
func (f *Factory) SessionIDs() []string {
	dir := taskdir.Open(f.ProjectRoot).SessionsDir()
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	ids := make([]string, 0, len(files))
	for _, p := range files {
		ids = append(ids, strings.TrimSuffix(filepath.Base(p), ".jsonl"))
	}
	slices.Sort(ids)
	mine, _ := session.Split(dir, ids)
	return mine
}

// completeLoaded runs fn after loading the Factory: completion runs no
// PersistentPreRun.
func (f *Factory) completeLoaded(fn func() []string) ([]string, cobra.ShellCompDirective) {
	if f.ProjectRoot == "" {
		if err := f.Load(); err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
	}
	return fn(), cobra.ShellCompDirectiveNoFileComp
}

// CompleteTaskIDs completes a task id as the first argument.
func (f *Factory) CompleteTaskIDs(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return f.completeLoaded(f.TaskIDs)
}

// CompleteSessionIDs completes --resume.
func (f *Factory) CompleteSessionIDs(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return f.completeLoaded(f.SessionIDs)
}

// CompleteAgents completes an agent type as the first argument.
func (f *Factory) CompleteAgents(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return f.completeLoaded(func() []string {
		var names []string
		for _, d := range f.Registry().All() {
			names = append(names, d.Name+"\t"+FirstLine(d.Description, 60))
		}
		return names
	})
}

// CompleteModels completes --model: the configured one and the usual
// provider/model forms.
func (f *Factory) CompleteModels(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return f.completeLoaded(func() []string {
		models := []string{"anthropic/claude-sonnet-5-5", "anthropic/claude-opus-5-5", "anthropic/claude-haiku-5", "openai/gpt-5", "ollama/qwen3", "script:"}
		if m := f.Settings.Model; m != "" && !slices.Contains(models, m) {
			models = append([]string{m}, models...)
		}
		return models
	})
}
