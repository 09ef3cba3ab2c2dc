// Package projectfiles reads the instruction files Claude Code users keep
// in their repositories and home — CLAUDE.md (user, project, and each
// directory from the project root down to the working directory, with
// CLAUDE.local.md and .claude/CLAUDE.md beside them) and AGENTS.md, with
// the files they import (@path, as Claude Code reads them) — and renders
// them for a system prompt. A repository's files, and what they import,
// must really be inside the project (links resolved), so a repository
// cannot pull a file of the user's into the prompt. It reads files only;
// what goes into which prompt is its callers' choice.
package projectfiles

import (
	"fmt"
	"io"
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
	return FindWith(Options{Home: home, Root: root, Cwd: cwd, MaxBytes: maxBytes})
}

// Options are Find's, and the judge of each import.
type Options struct {
	Home, Root, Cwd string
	MaxBytes        int
	// Refuse, when set, is asked of every @import before it is read: imp
	// as it is about to be read (Path its path, Real its links resolved),
	// From the file that imports it. A reason refuses it.
	Refuse func(imp Import) string
	// Warn gets one line for each import refused.
	Warn func(line string)
}

// Import is one @import about to be read.
type Import struct {
	Path, Real string
	From       File
	Line       int
}

// FindWith is Find with opts' judge of imports.
func FindWith(opts Options) []File {
	r := &reader{maxBytes: opts.MaxBytes, seen: map[string]bool{}, opts: opts}
	if opts.Home != "" {
		// The user's own file may import from anywhere it likes.
		r.add(filepath.Join(opts.Home, ".claude", "CLAUDE.md"), "user", "", opts.Home, 0)
	}
	for _, dir := range chain(opts.Root, opts.Cwd) {
		for _, n := range names {
			// A repository's files stay inside it: a CLAUDE.md that is a
			// link to ~/.aws/credentials, or imports it, is not read.
			r.add(filepath.Join(dir, n.name), n.scope, opts.Root, opts.Home, 0)
		}
	}
	return r.out
}

// reader reads instruction files and the files they import.
type reader struct {
	maxBytes int
	seen     map[string]bool // real paths read already (an import cycle, a file imported twice)
	out      []File
	opts     Options
}

// maxImportDepth is how many hops of @imports are followed, as Claude Code
// follows them.
const maxImportDepth = 5

// add reads path (scope as given) and, after it, the files it imports. A
// file must be a regular file (a FIFO would block the read) and, when
// within is set, really inside it (its links resolved).
func (r *reader) add(path, scope, within, home string, depth int) {
	real, ok := regularWithin(path, within)
	if !ok || r.seen[real] {
		return
	}
	r.seen[real] = true
	text, ok := r.read(real, filepath.Base(path))
	if !ok {
		return
	}
	from := File{Path: path, Scope: scope, Text: text}
	r.out = append(r.out, from)
	if depth >= maxImportDepth {
		return
	}
	for _, at := range imports(text) {
		imp, target := at.path, at.path
		switch {
		case strings.HasPrefix(imp, "~/"):
			if home == "" {
				continue
			}
			target = filepath.Join(home, imp[2:])
		case !filepath.IsAbs(imp):
			target = filepath.Join(filepath.Dir(path), imp)
		}
		target = filepath.Clean(target)
		if !r.allowed(Import{Path: target, From: from, Line: at.line}, imp, within) {
			continue
		}
		r.add(target, scope, within, home, depth+1)
	}
}

// allowed asks the judge (Options.Refuse) about an import that would be
// read, and warns of one it refuses.
func (r *reader) allowed(imp Import, written, within string) bool {
	real, ok := regularWithin(imp.Path, within)
	if !ok || r.seen[real] || r.opts.Refuse == nil {
		return true // (not read anyway, or no judge)
	}
	imp.Real = real
	why := r.opts.Refuse(imp)
	if why == "" {
		return true
	}
	if r.opts.Warn != nil {
		r.opts.Warn(fmt.Sprintf("%s:%d: @%s not imported: %s", imp.From.Path, imp.Line, written, why))
	}
	return false
}

// read reads a file, cut at maxBytes with a note; false if it is empty or
// cannot be read.
func (r *reader) read(path, name string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	limit := int64(1 << 20)
	if r.maxBytes > 0 {
		limit = int64(r.maxBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || strings.TrimSpace(string(b)) == "" {
		return "", false
	}
	text := string(b)
	if int64(len(b)) > limit {
		text = text[:limit] + fmt.Sprintf("\n[… %s cut at %d of %d bytes]", name, limit, info.Size())
	}
	return text, true
}

// regularWithin resolves path's links and reports its real path, if it is
// a regular file inside within (anywhere when within is "").
func regularWithin(path, within string) (string, bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false
	}
	info, err := os.Stat(real)
	if err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	if within != "" {
		base, err := filepath.EvalSymlinks(within)
		if err != nil {
			return "", false
		}
		rel, err := filepath.Rel(base, real)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			return "", false
		}
	}
	return real, true
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
