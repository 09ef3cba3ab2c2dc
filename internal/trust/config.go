package trust

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// recordDirs are the parts of .brood/ that are brood's run records, not
// configuration: children write their own records there.
var recordDirs = []string{"dispatch", "records", "sessions", "outputs", "workflows", "brood-debug.log"}

// IsConfigPath reports whether a repository-relative, slash-separated path
// is brood's, Claude Code's or git's configuration, which a subagent never
// changes on its own: anything under .claude/, anything under .brood/
// except the run records (dispatch/, records/, sessions/, outputs/,
// workflows/), .mcp.json, and git's (IsGitConfigPath) — at any depth,
// since a subdirectory can be a project root.
func IsConfigPath(rel string) bool {
	segs := strings.Split(strings.Trim(filepath.ToSlash(rel), "/"), "/")
	for i, s := range segs {
		switch s {
		case ".claude":
			return true
		case ".brood":
			if i+1 == len(segs) || !slices.Contains(recordDirs, segs[i+1]) {
				return true
			}
		}
	}
	return segs[len(segs)-1] == ".mcp.json" || IsGitConfigPath(rel)
}

// Limits of what a ConfigState keeps in memory.
const (
	maxConfigFile  = 1 << 20
	maxConfigTotal = 16 << 20
)

// ConfigState is the configuration under a project root at one moment —
// .claude/, .brood/ less its records, .mcp.json — kept whole (content, mode,
// link targets) so that a change a subagent made in place can be undone.
type ConfigState struct {
	root    string
	tops    []string          // what is read under root
	keep    func(string) bool // which paths under tops are configuration
	mu      sync.Mutex        // Accept comes from the user's side while a child runs
	entries map[string]configEntry
	partial bool   // some file was too large to keep: it can be detected, not restored
	common  string // the common git dir whose modules/ ModuleTops walks again ("" none)
	// hiddenOK: a path this process may not read at the snapshot is kept
	// by its mode (a file) or by itself (a directory) and noted in
	// unread, not an error (SnapshotUserConfigConfined).
	hiddenOK bool
	unread   map[string]bool
	// kind names keep for a durable record (StateRecord): keepConfig,
	// keepAll or keepNested; "" for a state that is never recorded (the
	// user's own configuration).
	kind string
	// aside: where Restore moves what it removes ("" nowhere: removed).
	aside string
}

type configEntry struct {
	mode fs.FileMode // type and permission bits
	data []byte      // regular files
	link string      // symlinks
	kept bool        // data holds the content
}

// SnapshotConfig reads the configuration under root. Links are recorded,
// never followed.
func SnapshotConfig(root string) (*ConfigState, error) {
	return snapshot(&ConfigState{root: root, tops: []string{".claude", ".brood", ".mcp.json"}, keep: IsConfigPath, kind: keepConfig})
}

// userConfigPaths are the user's own configuration under their home, which
// no subagent changes either: brood's config directory (settings, agents,
// the trust grants), the user agents directory ~/.brood/agents, and Claude
// Code's settings and agents. (~/.claude.json is left out: Claude Code
// rewrites it all the time, and putting it back would undo Claude Code's
// own writes.)
var userConfigPaths = []string{".config/brood", ".brood/agents", ".claude/settings.json", ".claude/settings.local.json", ".claude/agents"}

// SnapshotUserConfig reads the user's configuration under home
// (userConfigPaths).
func SnapshotUserConfig(home string) (*ConfigState, error) {
	return snapshot(&ConfigState{root: home, tops: userConfigPaths, keep: func(string) bool { return true }})
}

// SnapshotUserConfigConfined is SnapshotUserConfig for a process its own
// sandbox keeps from reading part of the user's configuration (a child's
// nested dispatcher: its Landlock domain hides most of ~/.config/brood,
// and the whole snapshot failed, nothing watched: review33 P3-1). What it
// may not read at the snapshot is kept by its mode (a file) or by itself
// (a directory); what it could read then and cannot after is an error, as
// everywhere (a writer's chmod, not the sandbox).
func SnapshotUserConfigConfined(home string) (*ConfigState, error) {
	return snapshot(&ConfigState{root: home, tops: userConfigPaths, keep: func(string) bool { return true }, hiddenOK: true})
}

// covers reports whether rel is one of the state's paths: under one of its
// tops, and configuration.
func (c *ConfigState) covers(rel string) bool {
	return slices.ContainsFunc(c.tops, func(t string) bool { return rel == t || strings.HasPrefix(rel, t+"/") }) && c.keep(rel)
}

// Root is the directory the state's paths are relative to.
func (c *ConfigState) Root() string { return c.root }

func snapshot(c *ConfigState) (*ConfigState, error) {
	if c.hiddenOK {
		c.unread = map[string]bool{}
	}
	entries, partial, err := c.read(true)
	if err != nil {
		return nil, err
	}
	c.entries, c.partial = entries, partial
	return c, nil
}

// read walks the state's tops. At the snapshot (snap) a path this
// process may not read is, in a state that allows it (hiddenOK), noted
// in unread; after, only a path noted there may still be unreadable:
// anything else this process is refused is an error (a writer that made a
// directory unlistable, chmod 0300, must not hide what it planted there:
// review35 P1-1).
func (c *ConfigState) read(snap bool) (map[string]configEntry, bool, error) {
	root := c.root
	out := map[string]configEntry{}
	total, partial := 0, false
	hidden := func(p string, err error) bool {
		if !errors.Is(err, fs.ErrPermission) || c.unread == nil {
			return false
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if snap {
			c.unread[rel] = true
		}
		return c.unread[rel]
	}
	for _, top := range c.tops {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) || err != nil && hidden(p, err) {
				return nil // (a directory this process may not list: its entry is kept, its contents are not)
			}
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if !c.keep(rel) || !d.IsDir() && isHookSample(rel) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			e := configEntry{mode: info.Mode().Type() | info.Mode().Perm()}
			switch {
			case info.Mode()&fs.ModeSymlink != 0:
				e.link, err = os.Readlink(p)
			case info.Mode().IsRegular():
				if info.Size() <= maxConfigFile && total+int(info.Size()) <= maxConfigTotal {
					e.data, err = os.ReadFile(p)
					e.kept = err == nil
					total += len(e.data)
					if err != nil && hidden(p, err) {
						err = nil // compared by mode only, as a file too large to keep
					}
				} else {
					partial = true
				}
			}
			if err != nil {
				return err
			}
			out[rel] = e
			return nil
		})
		if err != nil {
			return nil, false, fmt.Errorf("config snapshot: %w", err)
		}
	}
	return out, partial, nil
}

// isHookSample reports whether rel is one of git's stock hook samples
// (.git/hooks/pre-commit.sample, a submodule's or nested repository's
// too): git runs a hook only by a name githooks(5) lists (hook.c:
// find_hook refuses any other), none ends in .sample, so a sample is not
// configuration that runs. It is neither kept nor compared: a sample
// renamed into place is a hook that was not there, and is removed.
func isHookSample(rel string) bool {
	segs := strings.Split(rel, "/")
	n := len(segs)
	return n >= 3 && strings.HasSuffix(segs[n-1], ".sample") && segs[n-2] == "hooks" && slices.Contains(segs[:n-2], ".git")
}

// Changes lists, sorted, the configuration paths that differ now from the
// snapshot: added, removed, rewritten, re-moded or turned into a link.
func (c *ConfigState) Changes() ([]string, error) {
	now, _, err := c.read(false)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for rel, e := range now {
		if old, ok := c.entries[rel]; !ok || !sameEntry(old, e) {
			out = append(out, rel)
		}
	}
	for rel := range c.entries {
		if _, ok := now[rel]; !ok {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out, nil
}

func sameEntry(a, b configEntry) bool {
	if a.mode != b.mode || a.link != b.link {
		return false
	}
	if a.mode.IsRegular() && a.kept && b.kept {
		return bytes.Equal(a.data, b.data)
	}
	return a.kept == b.kept // a file too large to keep: compared by mode only
}

// Restore puts the given paths (from Changes) back as they were in the
// snapshot: what is new is removed (a link, not its target), what changed or
// went away is written again. It returns the paths it could not restore (a
// file too large to have been kept) and the first error.
func (c *ConfigState) Restore(paths []string) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var failed []string
	var errs []error
	// Remove what differs, deepest first, without following links.
	sorted := slices.Clone(paths)
	slices.SortFunc(sorted, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, rel := range sorted {
		e, had := c.entries[rel]
		if had && e.mode.IsRegular() && !e.kept {
			failed = append(failed, rel)
			continue
		}
		if err := c.removeOne(rel, e, had); err != nil {
			errs = append(errs, err)
		}
	}
	// Write back what the snapshot had, parents first.
	slices.Reverse(sorted)
	for _, rel := range sorted {
		e, had := c.entries[rel]
		if !had || slices.Contains(failed, rel) {
			continue
		}
		if err := c.put(rel, e); err != nil {
			errs = append(errs, err)
		}
	}
	return failed, errors.Join(errs...)
}

func (c *ConfigState) abs(rel string) string { return filepath.Join(c.root, filepath.FromSlash(rel)) }

// Accept takes a write the user's own process made while the snapshot's
// child runs (an "always" answer kept in .brood/settings.local.toml) into
// the snapshot: it is the configuration now, not a change of the child's
// to undo. data and perm are what the user's process wrote — never what
// is on disk, which the child may have changed meanwhile. Parent
// directories missing from the snapshot are taken in too. A path that is
// not configuration (IsConfigPath) or leaves the root is ignored.
func (c *ConfigState) Accept(rel string, data []byte, perm fs.FileMode) {
	rel = path.Clean(filepath.ToSlash(rel))
	if !filepath.IsLocal(rel) || !c.covers(rel) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for dir := path.Dir(rel); dir != "." && c.covers(dir); dir = path.Dir(dir) {
		if _, ok := c.entries[dir]; !ok {
			mode := fs.ModeDir | 0o755
			if info, err := os.Lstat(c.abs(dir)); err == nil && info.IsDir() {
				mode = fs.ModeDir | info.Mode().Perm()
			}
			c.entries[dir] = configEntry{mode: mode}
		}
	}
	c.entries[rel] = configEntry{mode: perm.Perm(), data: slices.Clone(data), kept: true}
}

// Baseline is a file's content in the snapshot (with what was accepted
// since): what the user's process builds on when it writes configuration
// while a child runs, so a child's own edit of the same file is not taken
// in with it. ok is false when the snapshot has no such file; kept is
// false when it was too large to keep.
func (c *ConfigState) Baseline(rel string) (data []byte, ok, kept bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[path.Clean(filepath.ToSlash(rel))]
	if !ok || !e.mode.IsRegular() {
		return nil, false, true
	}
	return slices.Clone(e.data), true, e.kept
}
