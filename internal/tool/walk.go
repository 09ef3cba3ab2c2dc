package tool

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/broodhq/brood/internal/gitx"
)

// ignorePattern is one line of a .gitignore file.
type ignorePattern struct {
	base     string // absolute directory holding the .gitignore
	glob     string // doublestar pattern, without the leading ! / and trailing /
	negate   bool
	dirOnly  bool
	anchored bool // contains a slash: matched against the path from base
}

// parseGitignore reads the patterns of one .gitignore file; a missing or
// unreadable file has none.
func parseGitignore(dir string) []ignorePattern {
	return parseIgnoreFile(filepath.Join(dir, ".gitignore"), dir)
}

// parseIgnoreFile reads the patterns of an ignore file whose patterns are
// relative to dir.
func parseIgnoreFile(file, dir string) []ignorePattern {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []ignorePattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if !strings.HasSuffix(line, `\ `) {
			line = strings.TrimRight(line, " \t")
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := ignorePattern{base: dir}
		if strings.HasPrefix(line, "!") {
			p.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			p.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		p.anchored = strings.Contains(line, "/")
		p.glob = strings.TrimPrefix(line, "/")
		if p.glob == "" || !doublestar.ValidatePattern(p.glob) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// ignored applies gitignore semantics (the last matching pattern wins) to an
// absolute path; patterns must be ordered from the outermost file inward.
func ignored(patterns []ignorePattern, abs string, isDir bool) bool {
	result := false
	for _, p := range patterns {
		if p.dirOnly && !isDir {
			continue
		}
		rel, err := filepath.Rel(p.base, abs)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		rel = filepath.ToSlash(rel)
		var ok bool
		if p.anchored {
			ok, _ = doublestar.Match(p.glob, rel)
		} else {
			ok, _ = doublestar.Match(p.glob, path.Base(rel))
		}
		if ok {
			result = !p.negate
		}
	}
	return result
}

// repoExcludes are the patterns git applies below every .gitignore of the
// repository at top: core.excludesFile (asked of git itself, so includes
// and ~ are git's; $XDG_CONFIG_HOME/git/ignore or ~/.config/git/ignore when
// unset), then .git/info/exclude. They come first: a .gitignore can
// re-include what they exclude.
func repoExcludes(ctx context.Context, top string) []ignorePattern {
	if top == "" {
		return nil
	}
	var out []ignorePattern
	if global := excludesFile(ctx, top); global != "" {
		out = append(out, parseIgnoreFile(global, top)...)
	}
	return append(out, parseIgnoreFile(filepath.Join(top, ".git", "info", "exclude"), top)...)
}

// excludesFile is the repository's core.excludesFile.
func excludesFile(ctx context.Context, top string) string {
	if out, err := gitx.Run(ctx, top, "config", "--path", "--get", "core.excludesFile"); err == nil {
		if p := strings.TrimSpace(out); p != "" {
			if !filepath.IsAbs(p) {
				p = filepath.Join(top, p)
			}
			return p
		}
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", "ignore")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".config", "git", "ignore")
	}
	return ""
}

// repoTop is the top of the git repository holding dir, or "".
func repoTop(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// ancestorIgnores loads the .gitignore files above root that still apply to
// it: up to the enclosing git repository's top, or, outside a repository, up
// to the workspace. They come outermost first.
func ancestorIgnores(root, workspace string) []ignorePattern {
	var dirs []string
	found := false
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		if d == root {
			break
		}
		dirs = append(dirs, d)
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			found = true
			break
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
		dirs, found = nil, true
	}
	var out []ignorePattern
	for i := len(dirs) - 1; i >= 0; i-- {
		if !found && !inside(workspace, dirs[i]) {
			continue
		}
		out = append(out, parseGitignore(dirs[i])...)
	}
	return out
}

// walker lists a tree the way a developer sees it: .git is never entered,
// .gitignore'd files are left out, and so are files a deny rule keeps from
// Read.
// Dot files are included, as with ripgrep's --hidden: agents need to see
// .github/ and .env.example.
type walker struct {
	env   *Env
	visit func(abs string, d fs.DirEntry) error
}

// errStopWalk ends a walk early without being an error (a result cap).
var errStopWalk = errors.New("stop walk")

// walk calls visit for every file under root (root itself when it is a
// file) in lexical order. Directories are passed too, before their contents,
// so callers can list them; returning fs.SkipDir prunes one.
func (w walker) walk(ctx context.Context, root string) error {
	info, err := os.Lstat(root)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		err = w.visit(root, fs.FileInfoToDirEntry(info))
	} else {
		patterns := append(repoExcludes(ctx, repoTop(root)), ancestorIgnores(root, w.env.Dir)...)
		err = w.dir(ctx, root, patterns)
	}
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

func (w walker) dir(ctx context.Context, dir string, patterns []ignorePattern) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // an unreadable directory is left out, like ripgrep does
	}
	if own := parseGitignore(dir); len(own) > 0 {
		patterns = append(patterns[:len(patterns):len(patterns)], own...)
	}
	for _, e := range entries {
		abs := filepath.Join(dir, e.Name())
		if e.Name() == ".git" || ignored(patterns, abs, e.IsDir()) || w.env.Perms.deniesRead(abs, w.env.Dir) {
			continue
		}
		err := w.visit(abs, e)
		if err == fs.SkipDir {
			continue
		}
		if err != nil {
			return err
		}
		if e.IsDir() {
			if err := w.dir(ctx, abs, patterns); err != nil {
				return err
			}
		}
	}
	return nil
}

// sniffLen is how much of a file is read to decide whether it is binary.
const sniffLen = 8000

// isBinary reports whether data (a file's first bytes) looks like a binary
// file: it holds a NUL byte, as git and grep decide.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0
}

// sniffFile reads the start of a file to decide whether it is binary.
func sniffFile(abs string) (bool, error) {
	f, err := os.Open(abs)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, sniffLen)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return false, err
	}
	return isBinary(buf[:n]), nil
}
