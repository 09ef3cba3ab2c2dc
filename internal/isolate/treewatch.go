package isolate

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/gitx"
)

// maxSkipped bounds the ignored entries a tree watch's cache keeps: past
// it the next writer watches every directory (slower, as right).
const maxSkipped = 4096

// maxWatchCaches bounds the caches kept (one a work tree): past it the
// older half goes (a tree whose cache went has its next writer walk).
const maxWatchCaches = 256

// watchCache is the file, in the parent user's cache directory (never in
// the tree: a repository must not plant or edit it), that names the
// entries of a work tree its last isolated writer found ignored, so the
// next one sets no watches beneath them. It is a hint, not trusted: every
// entry it names that this writer's own walk does not find ignored makes
// the watch unusable (the finish walks the tree, as without it); one it
// leaves out costs a watch.
type watchCache struct {
	path string
}

type watchEntry struct {
	Top     string   `json:"top"`
	Ignored []string `json:"ignored"`
}

// newWatchCache is the cache of the work tree top (with git directory
// gitDir) under dir, or nil where there is no dir.
func newWatchCache(dir, top, gitDir string) *watchCache {
	if dir == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(top + "\x00" + gitDir))
	return &watchCache{path: filepath.Join(dir, hex.EncodeToString(sum[:16])+".json")}
}

// load returns the ignored entries last stored for top (ok false: none).
func (c *watchCache) load(top string) ([]string, bool) {
	b, err := os.ReadFile(c.path)
	if err != nil {
		return nil, false
	}
	var e watchEntry
	if json.Unmarshal(b, &e) != nil || e.Top != top || len(e.Ignored) > maxSkipped {
		return nil, false
	}
	return e.Ignored, true
}

// store keeps ignored for top (tmp+rename), unless it is what was loaded.
func (c *watchCache) store(top string, ignored, was []string) {
	if len(ignored) > maxSkipped || slices.Equal(ignored, was) {
		return
	}
	b, err := json.Marshal(watchEntry{Top: top, Ignored: ignored})
	if err != nil || os.MkdirAll(filepath.Dir(c.path), 0o700) != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(c.path), ".watch-*")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil && cerr == nil && os.Rename(f.Name(), c.path) == nil {
		pruneWatchCaches(filepath.Dir(c.path))
		return
	}
	os.Remove(f.Name())
}

// pruneWatchCaches removes the older half of the caches in dir when there
// are more than maxWatchCaches (test runs and throwaway clones make many).
func pruneWatchCaches(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil || len(des) <= maxWatchCaches {
		return
	}
	type aged struct {
		name string
		mod  int64
	}
	var all []aged
	for _, d := range des {
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			all = append(all, aged{d.Name(), fi.ModTime().UnixNano()})
		}
	}
	slices.SortFunc(all, func(a, b aged) int { return cmp.Compare(a.mod, b.mod) })
	for _, a := range all[:len(all)/2] {
		os.Remove(filepath.Join(dir, a.name))
	}
}

// underAny reports whether rel is one of entries or beneath one.
func underAny(rel string, entries map[string]bool) bool {
	for p := rel; ; {
		if entries[p] {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// excludeSources are the files besides the tree's own .gitignore files
// whose change can change what git ignores (or where it looks for more):
// the repository's config and info/exclude, the user's config and global
// excludes where git looks for them by default, and — as git resolves
// them (gitSources) — every config file it reads (system, included) and
// the file core.excludesFile names.
func excludeSources(ctx context.Context, r *repo) []string {
	out := []string{filepath.Join(r.common, "config"), filepath.Join(r.common, "info", "exclude"),
		filepath.Join(r.gitDir, "config.worktree")}
	home, err := os.UserHomeDir()
	if err == nil {
		out = append(out, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"),
			filepath.Join(home, ".config", "git", "ignore"))
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		out = append(out, filepath.Join(x, "git", "config"), filepath.Join(x, "git", "ignore"))
	}
	for _, s := range gitSources(ctx, r.top, home) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// gitSources are the config files git reads in the work tree at top
// (`git config --list --show-origin`: the system's, the user's, those
// included) and the file core.excludesFile names (~ is home; a relative
// path is top's). An error gives none: the defaults stand.
func gitSources(ctx context.Context, top, home string) []string {
	out, err := gitx.Run(ctx, top, "config", "--list", "--show-origin", "-z")
	if err != nil {
		return nil
	}
	var srcs []string
	recs := strings.Split(out, "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		origin, kv := recs[i], recs[i+1]
		if f, ok := strings.CutPrefix(origin, "file:"); ok && f != "" {
			srcs = append(srcs, absFrom(top, f))
		}
		key, val, _ := strings.Cut(kv, "\n")
		if !strings.EqualFold(key, "core.excludesfile") || val == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(val, "~/"); ok && home != "" {
			val = filepath.Join(home, rest)
		}
		srcs = append(srcs, absFrom(top, val))
	}
	return srcs
}

// absFrom is p, made absolute from dir when it is relative.
func absFrom(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
