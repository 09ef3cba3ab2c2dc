package isolate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/trust"
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
// (the link, never what it points to; in a directory of the user's whose
// write bit a writer took away too: removeLink) and returns those it
// removed and those it could not, with why.
func RemoveLinks(top string, links []Link) (removed []Link, failed []string) {
	for _, l := range links {
		p := filepath.Join(top, filepath.FromSlash(l.Path))
		t, err := os.Readlink(p)
		if err == nil && t != l.Target {
			err = fmt.Errorf("it changed again")
		}
		if err == nil {
			err = removeLink(p)
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
// -> target): the link pass of an in-place writer's parent, which git
// status (no ignored path, no file of a nested repository) and the
// non-git walk's bound do not limit. It comes from the configuration
// guard's walk of the tree (LinksWithin) or from a walk of its own
// (TreeLinks): no link in a repository's git directory nor in the
// project's own .brood (trust.WalkOptions).
type Links struct {
	Root  string
	Links map[string]string
	// Unseen are the directories (relative to Root; "." for all of it)
	// below which the pass saw no link, and why.
	Unseen []trust.Unseen
	// Special are the pass's entries that are neither regular files,
	// directories nor links (trust.Nested.Special), relative to Root.
	Special map[string]string
}

// TreeLinks walks root for its links alone; skip (absolute, "" for
// none) is a directory whose links are not listed (the project's
// .brood, WalkOptions.Skip).
func TreeLinks(root, skip string) Links {
	n, err := trust.NestedWalk(root, trust.WalkOptions{Only: true, Skip: relSkip(root, skip)})
	return linksOf(root, "", n, err)
}

// LinksWithin is the link pass of root out of a walk of walkRoot with
// links (trust.NestedWalk: n, or its failure err); false when root is
// not walkRoot or beneath it, or the walk failed (the caller then walks
// root itself).
func LinksWithin(root, walkRoot string, n trust.Nested, err error) (Links, bool) {
	rel, rerr := filepath.Rel(Resolved(walkRoot), Resolved(root))
	if rerr != nil || !filepath.IsLocal(rel) && rel != "." || err != nil {
		return Links{}, false
	}
	return linksOf(root, filepath.ToSlash(rel), n, nil), true
}

// WalkSkip is WalkOptions.Skip for a walk of root leaving out skip
// (absolute): "" when skip is not below root.
func WalkSkip(root, skip string) string { return relSkip(root, skip) }

func relSkip(root, skip string) string {
	if skip == "" {
		return ""
	}
	rel, err := filepath.Rel(Resolved(root), Resolved(skip))
	if err != nil || !filepath.IsLocal(rel) {
		return ""
	}
	return filepath.ToSlash(rel)
}

// linksOf is the links and unseen directories of n below sub (relative
// to n's top; "" or "." for all of it), relative to sub.
func linksOf(root, sub string, n trust.Nested, err error) Links {
	out := Links{Root: root, Links: map[string]string{}}
	if err != nil {
		out.Unseen = []trust.Unseen{{Dir: ".", Why: err.Error()}}
		return out
	}
	under := func(p string) (string, bool) {
		if sub == "" || sub == "." {
			return p, true
		}
		rest, ok := strings.CutPrefix(p, sub+"/")
		return rest, ok
	}
	for p, t := range n.Links {
		if rel, ok := under(p); ok {
			out.Links[rel] = t
		}
	}
	for p, t := range n.Special {
		if rel, ok := under(p); ok {
			if out.Special == nil {
				out.Special = map[string]string{}
			}
			out.Special[rel] = t
		}
	}
	for _, u := range n.Unseen {
		if rel, ok := under(u.Dir); ok {
			out.Unseen = append(out.Unseen, trust.Unseen{Dir: rel, Why: u.Why})
		} else if sub != "" && strings.HasPrefix(sub+"/", u.Dir+"/") {
			out.Unseen = append(out.Unseen, trust.Unseen{Dir: ".", Why: u.Dir + ": " + u.Why})
		}
	}
	return out
}

// Blind says where the pass saw no link and why ("" when it saw the whole
// tree), a few directories named.
func (l Links) Blind() string {
	if len(l.Unseen) == 0 {
		return ""
	}
	var named []string
	for _, u := range l.Unseen[:min(len(l.Unseen), 5)] {
		named = append(named, u.Dir+": "+u.Why)
	}
	if n := len(l.Unseen) - len(named); n > 0 {
		named = append(named, fmt.Sprintf("%d more", n))
	}
	return strings.Join(named, "; ")
}

// Sees reports whether the pass looked where the link at p would be.
func (l Links) Sees(p string) bool {
	for _, u := range l.Unseen {
		if u.Dir == "." || p == u.Dir || strings.HasPrefix(p, u.Dir+"/") {
			return false
		}
	}
	return true
}

// CompareLinks compares two passes of a tree, before and after a writer,
// where both looked: made are the paths of after's links that before saw
// without them or with another target; unseen those of after's links
// where before could not look (the writer may have made them, or not).
func CompareLinks(before, after Links) (made, unseen []string) {
	for p, t := range after.Links {
		switch old, ok := before.Links[p]; {
		case !before.Sees(p):
			unseen = append(unseen, p)
		case !ok || old != t:
			made = append(made, p)
		}
	}
	slices.Sort(made)
	slices.Sort(unseen)
	return made, unseen
}

// CompareSpecial lists the entries of after that are neither regular
// files, directories nor links (a FIFO, a socket, a device) and that
// before saw without them, or of another type: what a writer made that
// git never lists (redteam19 P3-3), as "path (type)" would say it.
func CompareSpecial(before, after Links) []string {
	var made []string
	for p, t := range after.Special {
		if old, ok := before.Special[p]; before.Sees(p) && (!ok || old != t) {
			made = append(made, p)
		}
	}
	slices.Sort(made)
	return made
}

// RemoveSpecial removes each entry of paths under top (relative,
// slash-separated) that is still neither a regular file, a directory nor
// a link (a FIFO, a socket, a device node: nothing of the user's content
// is lost), as RemoveLinks removes a link, and returns those it removed
// and those it could not, with why.
func RemoveSpecial(top string, paths []string) (removed, failed []string) {
	for _, rel := range paths {
		p := filepath.Join(top, filepath.FromSlash(rel))
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone already (the configuration guard undid it)
		}
		if err == nil && (fi.Mode().IsRegular() || fi.IsDir() || fi.Mode()&os.ModeSymlink != 0) {
			err = fmt.Errorf("it changed again")
		}
		if err == nil {
			err = removeLink(p)
		}
		if err != nil {
			failed = append(failed, rel+": "+err.Error())
			continue
		}
		removed = append(removed, rel)
	}
	return removed, failed
}
