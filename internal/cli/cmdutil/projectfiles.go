package cmdutil

import (
	"github.com/broodhq/brood/internal/projectfiles"
	"github.com/broodhq/brood/internal/settings"
)

// ProjectFilesPrompt is the root agent's block of instruction files
// (CLAUDE.md: the user's, the project's, nested down to the working
// directory, the local one; AGENTS.md), each cut at project_files.max_bytes;
// "" when they are off.
func (f *Factory) ProjectFilesPrompt() string {
	pf := f.Settings.ProjectFiles
	if pf.Off {
		return ""
	}
	return projectfiles.Prompt(f.ProjectRoot, projectfiles.Find(f.Home, f.ProjectRoot, f.Cwd, pf.MaxBytes))
}

// ChildProjectFiles is the same files for subagents' prompts, each cut at
// project_files.child_max_bytes; "" when no subagent gets them.
func (f *Factory) ChildProjectFiles() string {
	pf := f.Settings.ProjectFiles
	if pf.Off || pf.Children == settings.ChildrenNone {
		return ""
	}
	return projectfiles.Prompt(f.ProjectRoot, projectfiles.Find(f.Home, f.ProjectRoot, f.Cwd, pf.ChildMaxBytes))
}
