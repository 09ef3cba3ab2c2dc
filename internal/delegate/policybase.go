package delegate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// childBase is what the policies of every child of one dispatcher share,
// found once (each stats and resolves links): the paths no child reads and
// the build caches a writer may write.
type childBase struct {
	// extra are more paths no child reads (Config.Hidden: the token file
	// of `brood mcp --http --token-file`).
	extra     []string
	hideOnce  sync.Once
	hidden    []string
	cacheOnce sync.Once
	caches    []string
}

// Hidden are ~/.config/brood/mcp, the extra paths and the token files
// `brood mcp --http --token-file` registered there (TokenFiles: read at
// each child's start, so a server started after this dispatcher is
// hidden too), by their real paths.
func (b *childBase) Hidden() []string {
	b.hideOnce.Do(func() {
		if d := mcpTokenDir(); d != "" {
			b.hidden = append(b.hidden, d)
		}
		for _, p := range b.extra {
			if p, err := filepath.Abs(p); err == nil {
				b.hidden = append(b.hidden, resolved(p))
			}
		}
	})
	out := slices.Clone(b.hidden)
	for _, p := range TokenFiles(mcpTokenDir()) {
		if p = resolved(p); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Caches are writerCaches, the default ones made first (a Landlock rule
// needs a directory, and a child cannot make one its policy does not
// already cover).
func (b *childBase) Caches() []string {
	b.cacheOnce.Do(func() {
		makeWriterCaches()
		b.caches = writerCaches()
	})
	return b.caches
}

// childBase is the dispatcher's shared policy parts.
func (d *Dispatcher) childBase() *childBase {
	d.baseOnce.Do(func() { d.base = &childBase{extra: d.cfg.Hidden} })
	return d.base
}

// mcpTokenDir is where `brood mcp --http` keeps the token of each start
// (~/.config/brood/mcp): no child reads it, or a child could dispatch
// through the user's server outside its cgroup, limits and depth cap.
// Hidden whether it exists or not (made later, it stays out of reach),
// by its real path (a ~/.config/brood linked into a dotfiles repository
// is hidden where it lives: the sandbox builds no rule on a link).
func mcpTokenDir() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || !filepath.IsAbs(home) {
		return ""
	}
	dir, rest := filepath.Join(home, ".config", "brood", "mcp"), ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join(home, ".config", "brood", "mcp")
		}
		dir, rest = parent, filepath.Join(filepath.Base(dir), rest)
	}
}

// tokenFilesName is the list, in ~/.config/brood/mcp, of the token files
// `brood mcp --http --token-file` put elsewhere: every dispatcher of the
// user's hides them from its children as it hides the directory.
const tokenFilesName = "token-files"

// TokenFiles are the token files registered in dir (RegisterTokenFile),
// absolute paths; none when the list is missing or unreadable.
func TokenFiles(dir string) []string {
	if dir == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, tokenFilesName))
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); filepath.IsAbs(l) {
			out = append(out, l)
		}
	}
	return out
}

// RegisterTokenFile adds path (made absolute) to the token files every
// child is kept from reading, unless it is in ~/.config/brood/mcp already
// (hidden as the directory is). The list is written 0600, tmp+rename, in
// the directory made 0700.
func RegisterTokenFile(path string) error {
	dir := mcpTokenDir()
	if dir == "" {
		return errors.New("no home directory to keep the list of token files in")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if under := resolved(abs); strings.HasPrefix(under, dir+string(filepath.Separator)) {
		return nil
	}
	have := TokenFiles(dir)
	if slices.Contains(have, abs) {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	body := strings.Join(append(have, abs), "\n") + "\n"
	f, err := os.CreateTemp(dir, "."+tokenFilesName+".tmp*")
	if err != nil {
		return err
	}
	_, werr := f.WriteString(body)
	if werr == nil {
		werr = f.Chmod(0o600)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), filepath.Join(dir, tokenFilesName))
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("register the token file %s in %s: %w", abs, dir, werr)
	}
	return nil
}
