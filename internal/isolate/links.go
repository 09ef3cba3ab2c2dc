package isolate

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Link is a symbolic link a writer left in the tree whose target leaves
// it: an absolute path, a ".." past the top, or a place inside the tree
// that is configuration (a .git directory, whose hooks git runs, or a
// .brood one, where a task keeps what its writer may rewrite later).
// Whatever is there was never part of the change anyone reviewed, and the
// user's `make` or a later unconfined tool follows the link into it.
type Link struct {
	Path   string `json:"path"`   // repository-relative
	Target string `json:"target"` // as the link holds it
	Why    string `json:"why"`
}

func (l Link) String() string { return fmt.Sprintf("%s -> %s (%s)", l.Path, l.Target, l.Why) }

// maxLinkHops bounds how many links a target is followed through (the
// kernel's own bound is 40).
const maxLinkHops = 40

// linkEscape follows the link at rel (repository-relative, slash-separated)
// to target, through the tree's other links (linkAt: the target of the link
// at a repository-relative path, if one is there), the way the kernel
// would, and says why it leaves the tree or reaches its configuration; ""
// when it stays in the tree. A link's own directories are directories (git
// writes no file beyond a link), so a leading ".." climbs from there.
func linkEscape(rel, target string, linkAt func(string) (string, bool)) string {
	if target == "" {
		return "an empty target"
	}
	if strings.HasPrefix(target, "/") {
		return "an absolute target, outside the tree"
	}
	var cur []string
	if d := path.Dir(rel); d != "." {
		cur = strings.Split(d, "/")
	}
	todo := strings.Split(target, "/")
	for hops := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "its target leaves the tree"
			}
			cur = cur[:len(cur)-1]
			continue
		}
		if f := foldPath(c); f == ".git" || f == ".brood" {
			return "its target is inside " + f + "/"
		}
		p := strings.Join(append(slices.Clone(cur), c), "/")
		t, ok := linkAt(p)
		if !ok {
			cur = append(cur, c)
			continue
		}
		if hops++; hops > maxLinkHops {
			return "too many links on the way"
		}
		if t == "" || strings.HasPrefix(t, "/") {
			return "through " + p + ", an absolute target, outside the tree"
		}
		// The next link's target is read from its own directory: cur.
		todo = append(strings.Split(t, "/"), todo...)
	}
	return ""
}

// treeLinkAt is a linkAt reading the work tree at top as it is on disk,
// through no link but the last component's (a path beyond a link is not
// the tree's: the walk never gets there, it follows the link first).
func treeLinkAt(top string) func(string) (string, bool) {
	return func(rel string) (string, bool) {
		p := filepath.Join(top, filepath.FromSlash(rel))
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return "", false
		}
		t, err := os.Readlink(p)
		return t, err == nil
	}
}

// patchLinks finds the symbolic links a patch makes or retargets (entries
// whose new mode is 120000) whose target leaves the tree at w.repo.top, as
// that tree will be with the patch's other links in it.
func (w *Workspace) patchLinks(ctx context.Context, entries []rawEntry) ([]Link, error) {
	var made []rawEntry
	for _, e := range entries {
		if e.status != 'D' && e.newMode == "120000" {
			made = append(made, e)
		}
	}
	if len(made) == 0 {
		return nil, nil
	}
	specs := make([]string, len(made))
	for i, e := range made {
		specs[i] = e.newBlob
	}
	targets, err := w.catSpecs(ctx, specs)
	if err != nil {
		return nil, err
	}
	inPatch := map[string]string{}
	for i, e := range made {
		inPatch[e.path] = string(targets[i])
	}
	// A path the patch writes as anything else, or removes, is no link.
	other := map[string]bool{}
	for _, e := range entries {
		if _, ok := inPatch[e.path]; !ok {
			other[e.path] = true
		}
	}
	onDisk := treeLinkAt(w.repo.top)
	linkAt := func(rel string) (string, bool) {
		if t, ok := inPatch[rel]; ok {
			return t, true
		}
		if other[rel] {
			return "", false
		}
		return onDisk(rel)
	}
	var out []Link
	for _, e := range made {
		t := inPatch[e.path]
		if why := linkEscape(e.path, t, linkAt); why != "" {
			out = append(out, Link{Path: e.path, Target: t, Why: why})
		}
	}
	return out, nil
}

// linksRefused is the conflict text of a landing refused for its links.
func linksRefused(links []Link) string {
	names := make([]string, len(links))
	for i, l := range links {
		names[i] = l.String()
	}
	return "it makes symbolic link(s) pointing outside the tree, which brood never lands (what they point to is no part of the change): " +
		strings.Join(names, ", ")
}

// EscapingLinks checks the paths an in-place writer changed (relative to
// the work tree top, as dispatch.Changed lists them): each that is a
// symbolic link now whose target leaves the tree (linkEscape) is returned.
// Links within the tree are fine.
func EscapingLinks(top string, changed []string) []Link {
	linkAt := treeLinkAt(top)
	var out []Link
	for _, rel := range changed {
		rel = filepath.ToSlash(rel)
		t, ok := linkAt(rel)
		if !ok {
			continue
		}
		if why := linkEscape(rel, t, linkAt); why != "" {
			out = append(out, Link{Path: rel, Target: t, Why: why})
		}
	}
	return out
}

// RemoveLinks removes each of links under top that is still that link
// (the link, never what it points to) and returns those it removed and
// those it could not, with why.
func RemoveLinks(top string, links []Link) (removed []Link, failed []string) {
	for _, l := range links {
		p := filepath.Join(top, filepath.FromSlash(l.Path))
		t, err := os.Readlink(p)
		if err == nil && t != l.Target {
			err = fmt.Errorf("it changed again")
		}
		if err == nil {
			err = os.Remove(p)
		}
		if err != nil {
			failed = append(failed, l.Path+": "+err.Error())
			continue
		}
		removed = append(removed, l)
	}
	return removed, failed
}

// SharedFiles are the regular files among changed (relative to top) that
// have more than one name: a hard link the writer made to a file outside
// the tree shows here what that file holds, and changes with it. They are
// named, not undone (the user's own hard links look the same).
func SharedFiles(top string, changed []string) []string {
	var out []string
	for _, rel := range changed {
		fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(rel)))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if n := linkCount(fi); n > 1 {
			out = append(out, fmt.Sprintf("%s (%d names)", filepath.ToSlash(rel), n))
		}
	}
	return slices.SortedFunc(slices.Values(out), func(a, b string) int { return cmp.Compare(a, b) })
}

// Links is every symbolic link of a tree (relative, slash-separated path
// -> target), from TreeLinks: the link pass of an in-place writer's
// parent, which git status (no ignored path, no file of a nested
// repository) and the non-git walk's bound do not limit.
type Links struct {
	Root  string
	Links map[string]string
	// Unchecked says what the walk could not see (past its bound, a
	// directory it could not read); "" when it saw the whole tree.
	Unchecked string
}

// MaxLinkWalk bounds the entries TreeLinks visits.
const MaxLinkWalk = 1_000_000

// TreeLinks lists the symbolic links under root but in its .git and .brood
// directories (at any depth, in any case), visiting at most limit entries
// (0: MaxLinkWalk). A directory entry's type comes from the directory
// read: no entry but a link is stat'ed.
func TreeLinks(root string, limit int) Links {
	if limit <= 0 {
		limit = MaxLinkWalk
	}
	out := Links{Root: root, Links: map[string]string{}}
	var unreadable []string
	n := 0
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if p != root {
				rel, _ := filepath.Rel(root, p)
				unreadable = append(unreadable, filepath.ToSlash(rel))
			}
			return nil
		}
		if n++; n > limit {
			out.Unchecked = fmt.Sprintf("the tree has over %d entries", limit)
			return filepath.SkipAll
		}
		if d.IsDir() {
			if f := foldPath(d.Name()); p != root && (f == ".git" || f == ".brood") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&os.ModeSymlink == 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if t, err := os.Readlink(p); err == nil {
			out.Links[filepath.ToSlash(rel)] = t
		}
		return nil
	})
	if len(unreadable) > 0 && out.Unchecked == "" {
		out.Unchecked = "these directories could not be read: " + strings.Join(unreadable[:min(len(unreadable), 5)], ", ")
	}
	return out
}

// NewLinks are the paths of after's links that before did not have, or
// had with another target.
func NewLinks(before, after Links) []string {
	var out []string
	for p, t := range after.Links {
		if old, ok := before.Links[p]; !ok || old != t {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
