package cmdutil

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
	"github.com/broodhq/brood/internal/projectfiles"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/tool"
)

// ProjectFilesPrompt is the root agent's block of instruction files
// (CLAUDE.md: the user's, the project's, nested down to the working
// directory, the local one; AGENTS.md), each cut at project_files.max_bytes;
// "" when they are off. deny are the run's deny rules: an import one of
// their Read rules matches is not read (importJudge).
func (f *Factory) ProjectFilesPrompt(ctx context.Context, deny []string) string {
	pf := f.Settings.ProjectFiles
	if pf.Off {
		return ""
	}
	return projectfiles.Prompt(f.ProjectRoot, f.findProjectFiles(ctx, deny, pf.MaxBytes))
}

// ChildProjectFiles is the same files for subagents' prompts, each cut at
// project_files.child_max_bytes; "" when no subagent gets them.
func (f *Factory) ChildProjectFiles(ctx context.Context, deny []string) string {
	pf := f.Settings.ProjectFiles
	if pf.Off || pf.Children == settings.ChildrenNone {
		return ""
	}
	return projectfiles.Prompt(f.ProjectRoot, f.findProjectFiles(ctx, deny, pf.ChildMaxBytes))
}

func (f *Factory) findProjectFiles(ctx context.Context, deny []string, maxBytes int) []projectfiles.File {
	return projectfiles.FindWith(projectfiles.Options{Home: f.Home, Root: f.ProjectRoot, Cwd: f.Cwd, MaxBytes: maxBytes,
		Refuse: f.importJudge(ctx, deny),
		Warn: func(line string) {
			// Said once a process, though the files are read for the root
			// and again for its children.
			f.importMu.Lock()
			defer f.importMu.Unlock()
			if f.importWarned == nil {
				f.importWarned = map[string]bool{}
			}
			if !f.importWarned[line] && f.Err != nil {
				f.importWarned[line] = true
				fmt.Fprintln(f.Err, "brood: warning:", line)
			}
		}})
}

// importJudge refuses an @import (redteam19 P1-2: the root reads imports
// unconfined, for its prompt and its writers'): a file the redactor takes
// for a secret (tool.IsSecretFile: .env, *.pem, ...), one a Read deny rule
// matches (links resolved, as the Read tool judges), one sandbox.hide
// names, and, imported by a file git tracks (the repository's), a file git
// does not track (gitignored or untracked: the user's own) unless the
// project is trusted.
func (f *Factory) importJudge(ctx context.Context, deny []string) func(projectfiles.Import) string {
	perms, _ := tool.NewPermissions("default", nil, AliasRules(append(append([]string(nil), f.Settings.Permissions.Deny...), deny...)), nil)
	trusted := f.Settings.Trust.Trusted || f.Settings.Trust.Forced
	return func(imp projectfiles.Import) string {
		if tool.IsSecretFile(filepath.Base(imp.Path)) || tool.IsSecretFile(filepath.Base(imp.Real)) {
			return "it is a secrets file (.env, .env.*, *.pem, *.key, ssh keys, .netrc, .git-credentials), which brood never puts in a prompt"
		}
		if inGitDir(imp.Path) || inGitDir(imp.Real) {
			// .git/config can hold a token in a remote's URL (review
			// envleak P2-3); nothing in a git directory is an instruction.
			return "it is in a git directory (.git/config can hold a remote's token), which brood never puts in a prompt"
		}
		if perms != nil {
			in, _ := json.Marshal(map[string]string{"file_path": imp.Path})
			if d := perms.Check("Read", in, f.ProjectRoot); d.Verdict == tool.Deny {
				return d.Reason
			}
		}
		for _, h := range f.Settings.Sandbox.Hide {
			if strings.HasPrefix(h, "~/") {
				h = filepath.Join(f.Home, h[2:])
			} else if !filepath.IsAbs(h) {
				h = filepath.Join(f.ProjectRoot, h)
			}
			if within(tool.ResolveLinks(h), imp.Real) {
				return "sandbox.hide names it (" + h + ")"
			}
		}
		if imp.From.Scope == "user" || trusted || f.ProjectRoot == "" {
			return ""
		}
		from := imp.From.Path
		if real, err := filepath.EvalSymlinks(from); err == nil {
			from = real
		}
		if tracked(ctx, f.ProjectRoot, from) == 1 && tracked(ctx, f.ProjectRoot, imp.Real) == 0 {
			return "git does not track it (ignored or untracked: yours, not the repository's); a repository's file imports only its tracked files until you trust the project (brood trust)"
		}
		return ""
	}
}

// tracked is 1 when git tracks path in the repository at root, 0 when it
// does not, -1 when git cannot say (no repository, no git).
func tracked(ctx context.Context, root, path string) int {
	out, err := gitx.Run(ctx, root, "ls-files", "-z", "--full-name", "--", path)
	switch {
	case err != nil:
		return -1
	case out == "":
		return 0
	}
	return 1
}

// within reports whether p is dir or beneath it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// inGitDir reports whether p has a .git component (any case).
func inGitDir(p string) bool {
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}
