package isolate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/dispatch"
)

// The run's additional working directories (--add-dir, a trusted
// permissions.additionalDirectories) are an in-place writer's to write as
// its tree (a Landlock write rule each). A write rule also lets it read
// there, and Landlock only adds rights, so an added directory that holds a
// path no child may read would hand it over; and an added directory that
// holds the user's home or configuration would let a writer plant hooks
// for the user's next session. Those are refused (AddDirRefused); the
// configuration inside an accepted one is held read-only in the writer's
// view as the project's is (View.HoldingAddDirs).

// AddDirRefused says why dir (absolute) may not be an added working
// directory, or "" when it may: it is, holds or is inside one of
// ~/.config/brood, ~/.brood, ~/.claude, ~/.cache/brood, brood's state
// directory or a path in hidden (PolicyBase.Hidden); or it is or holds
// the home directory. Paths are compared with their links resolved.
func AddDirRefused(dir string, hidden []string) string {
	d := Resolved(filepath.Clean(dir))
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		for _, h := range []string{filepath.Clean(home), resolvedAbove(home)} {
			if beneath(d, h) {
				return "it holds your home directory"
			}
		}
	}
	for _, p := range protectedDirs() {
		if beneath(d, p) || beneath(p, d) {
			return "it overlaps " + p + ", configuration or records of brood's or Claude Code's"
		}
	}
	for _, h := range hidden {
		if h = resolvedAbove(h); beneath(d, h) || beneath(h, d) {
			return "it overlaps " + h + ", which no subagent may read"
		}
	}
	return ""
}

// protectedDirs are the user's directories no added working directory
// may overlap, by their real paths where they exist.
func protectedDirs() []string {
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return nil
	}
	state := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(state) {
		state = filepath.Join(home, ".local", "state")
	}
	var out []string
	for _, p := range []string{
		filepath.Join(home, ".config", "brood"), filepath.Join(home, ".brood"), filepath.Join(home, ".claude"),
		filepath.Join(home, ".cache", "brood"), filepath.Join(state, "brood"),
	} {
		for _, q := range []string{p, resolvedAbove(p)} {
			if !slices.Contains(out, q) {
				out = append(out, q)
			}
		}
	}
	return out
}

// resolvedAbove is p with the links of its longest existing prefix
// resolved (p itself need not exist).
func resolvedAbove(p string) string {
	dir, rest := filepath.Clean(p), ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Clean(p)
		}
		dir, rest = parent, filepath.Join(filepath.Base(dir), rest)
	}
}

// addDirs are the absolute, existing directories of dirs that
// AddDirRefused accepts, links resolved (a Landlock rule needs a
// directory that exists). The root warns about a refused one
// (cli/run); here it is left out without a word.
func addDirs(dirs, hidden []string) []string {
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) || AddDirRefused(d, hidden) != "" {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && !slices.Contains(out, Resolved(d)) {
			out = append(out, Resolved(d))
		}
	}
	return out
}

// HoldingAddDirs is v with the configuration of each added directory in
// dirs held as the work tree's is (InPlaceView): its .git's configuration
// entries (the .git pinned as a mount point, a .git file held), and its
// .brood, .claude and .mcp.json; with allowConfig (the user's
// agents.allow_config_changes) only .git's and .brood.
func (v View) HoldingAddDirs(dirs []string, allowConfig bool) View {
	v.ReadOnly, v.Writable = slices.Clone(v.ReadOnly), slices.Clone(v.Writable)
	for _, d := range dirs {
		holdTop(&v, d)
		for _, e := range projectConfigEntries() {
			p := filepath.Join(d, e)
			if allowConfig && e != ".brood" || slices.Contains(v.ReadOnly, p) {
				continue
			}
			v.ReadOnly = appendExisting(v.ReadOnly, p)
		}
	}
	return v
}

// WriterRoots are the trees an in-place writer of env may write
// (ChildPolicy's Writable less its task directory and the caches): its
// WorkRoot first, then each --add-dir not beneath one already listed. Its
// parent's link pass walks each of them (review20 L8).
func WriterRoots(env *dispatch.Envelope, base *PolicyBase) []string {
	roots := []string{Resolved(WorkRoot(env))}
	for _, d := range addDirs(env.AddDirs, base.Hidden()) {
		if !slices.ContainsFunc(roots, func(r string) bool { return beneath(r, d) }) {
			roots = append(roots, d)
		}
	}
	return roots
}

// IntoTree reports whether link (relative to root, slash-separated), whose
// target is target, names a path in tree (lexically, not into its .git or
// .brood): an --add-dir's link into the work tree stays in what the
// writer may write. A ".." after a name is refused: the name may be a
// link, and the kernel climbs from where it leads.
func IntoTree(root, link, target, tree string) bool {
	if tree == "" || target == "" {
		return false
	}
	named := false
	for _, c := range strings.Split(target, "/") {
		switch {
		case c == ".." && named:
			return false
		case c != ".." && c != "" && c != ".":
			named = true
		}
	}
	p := target
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, filepath.Dir(filepath.FromSlash(link)), p)
	}
	rel, err := filepath.Rel(tree, filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		if f := foldPath(c); f == ".git" || f == ".brood" {
			return false
		}
	}
	return true
}
