// Package projectfiles reads the instruction files Claude Code users keep
// in their repositories and home — CLAUDE.md (user, project, and each
// directory from the project root down to the working directory, with
// CLAUDE.local.md and .claude/CLAUDE.md beside them) and AGENTS.md — and
// renders them for a system prompt. It reads files only; what goes into
// which prompt is its callers' choice.
package projectfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// File is one instruction file.
type File struct {
	Path  string // absolute
	Scope string // user | project | local
	Text  string
}

// names are the files read in each directory, in order.
var names = []struct{ name, scope string }{
	{"CLAUDE.md", "project"},
	{filepath.Join(".claude", "CLAUDE.md"), "project"},
	{"AGENTS.md", "project"},
	{"CLAUDE.local.md", "local"},
}

// Find returns the instruction files for a run in cwd inside the project
// at root, with home's ~/.claude/CLAUDE.md first: the more general first,
// so the nearer ones read as refinements (as Claude Code orders them).
// Files over maxBytes are cut there, with a note saying so.
func Find(home, root, cwd string, maxBytes int) []File {
	var out []File
	add := func(path, scope string) {
		b, err := os.ReadFile(path)
		if err != nil || strings.TrimSpace(string(b)) == "" {
			return
		}
		text := string(b)
		if maxBytes > 0 && len(text) > maxBytes {
			text = text[:maxBytes] + fmt.Sprintf("\n[… %s cut at %d of %d bytes]", filepath.Base(path), maxBytes, len(b))
		}
		out = append(out, File{Path: path, Scope: scope, Text: text})
	}
	if home != "" {
		add(filepath.Join(home, ".claude", "CLAUDE.md"), "user")
	}
	for _, dir := range chain(root, cwd) {
		for _, n := range names {
			add(filepath.Join(dir, n.name), n.scope)
		}
	}
	return out
}

// chain is root, then each directory down to cwd (cwd outside root: root
// only).
func chain(root, cwd string) []string {
	if root == "" {
		return nil
	}
	dirs := []string{root}
	rel, err := filepath.Rel(root, cwd)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return dirs
	}
	d := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		d = filepath.Join(d, part)
		dirs = append(dirs, d)
	}
	return dirs
}

// Prompt renders files as a system prompt section, each under its path
// relative to root. Empty when there are none.
func Prompt(root string, files []File) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nInstructions from the project's and the user's instruction files (CLAUDE.md, AGENTS.md). Follow them; a nearer file refines a more general one:\n")
	for _, f := range files {
		name := f.Path
		if rel, err := filepath.Rel(root, f.Path); err == nil && !strings.HasPrefix(rel, "..") {
			name = rel
		}
		fmt.Fprintf(&b, "\n<instructions file=%q scope=%q>\n%s\n</instructions>\n", name, f.Scope, strings.TrimRight(f.Text, "\n"))
	}
	return b.String()
}
