package trust

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/broodhq/brood/internal/dirents"
)

// Nested is what the walk of a work tree finds below its top.
type Nested struct {
	// Git are the git configuration tops of nested repositories
	// (NestedGitTops).
	Git []string
	// GitDirs are the nested repositories' .git directories (not a .git
	// file: its objects are elsewhere), relative to the top.
	GitDirs []string
	// Config are the entries named .brood, .claude or .mcp.json (in any
	// case) in a directory below the top: a subdirectory with a .brood or
	// a .git is a project root to the user's next brood there, which
	// reads its personal settings (.brood/settings.local.toml,
	// .claude/settings.local.json) without asking for trust.
	Config []string
	// Opened are the directories, of the user's own, that could be
	// searched but not listed and were given their owner's read bit back
	// to be walked (unreadable).
	Opened []string
	// Links are the tree's symbolic links (relative path -> target) and
	// Unseen the directories below which the walk saw none, with why:
	// collected with WalkOptions.Links only (linkwalk.go).
	Links  map[string]string
	Unseen []Unseen
	// Special are the tree's entries that are neither regular files,
	// directories nor links (relative path -> "fifo", "socket", "char
	// device", "block device"), which git never lists: collected with
	// WalkOptions.Links, where links are.
	Special map[string]string
}

// projectConfigNames are the entries that make or configure a project
// root (trust.IsConfigPath's, less git's).
var projectConfigNames = [][]byte{[]byte(".brood"), []byte(".claude"), []byte(".mcp.json")}

// isProjectConfigName reports whether name is one of projectConfigNames,
// in any case (a case-insensitive file system reads .Claude as .claude).
func isProjectConfigName(name []byte) bool {
	return slices.ContainsFunc(projectConfigNames, func(n []byte) bool { return bytes.EqualFold(name, n) })
}

// NestedTops walks the tree under top once for what NestedGitTops and
// Nested.Config name.
func NestedTops(top string) (Nested, error) {
	return NestedWalk(top, WalkOptions{})
}

// NestedWalk is NestedTops collecting what o asks for besides.
func NestedWalk(top string, o WalkOptions) (Nested, error) {
	w := nestedWalk{buf: make([]byte, 32<<10), opt: o}
	if o.Only {
		w.opt.Links = true
	}
	if err := w.dir(top, "", w.opt.Only); err != nil {
		return Nested{}, fmt.Errorf("nested repositories: %w", err)
	}
	return w.found, nil
}

// nestedGitTops walks the tree under top for `.git` entries, reading only
// directories' entries' names and types (dirents.SubdirsFunc): its cost
// follows the directories, not the files, of which a filepath.WalkDir
// makes, sorts and drops one os.DirEntry each (at 40,000 files: 24 ms of
// CPU against 9). Entries are visited in WalkDir's (lexical) order, so the
// tops come in the same order.
//
// Nothing below the top is followed: a directory is opened O_NOFOLLOW by
// its full path, and one that turns out to be a link or is gone is passed
// over; one that cannot be listed is unreadable's; any other failure (a
// path too long, too many open files) fails the walk, which its callers
// report as not checked.
func nestedGitTops(top string) ([]string, error) {
	w := nestedWalk{buf: make([]byte, 32<<10)}
	if err := w.dir(top, "", false); err != nil {
		return nil, err
	}
	return w.found.Git, nil
}

type nestedWalk struct {
	buf   []byte
	found Nested
	opt   WalkOptions
}

// wanted keeps, besides the subdirectories, a .git and the project
// configuration names of any type.
func wanted(name []byte) bool { return string(name) == ".git" || isProjectConfigName(name) }

// dir walks the directory abs (rel below the top, "" for the top). only
// walks it for links alone (WalkOptions.Only; a .git directory that is no
// repository's, linkwalk.go): nothing else is recorded, no read bit
// given back, and a directory below the top that cannot be read is
// Unseen, not the walk's failure.
func (w *nestedWalk) dir(abs, rel string, only bool) error {
	ents, err := dirents.List(abs, rel == "", w.buf, wanted, w.opt.Links)
	if err != nil && rel != "" && !only && errors.Is(err, fs.ErrPermission) {
		ents, err = w.unreadable(abs, rel, err)
	}
	if err != nil {
		if rel != "" && (only || passOver(err)) {
			w.unseen(abs, rel, err)
			return nil
		}
		return &fs.PathError{Op: "read", Path: abs, Err: err}
	}
	slices.SortFunc(ents, func(a, b dirents.Entry) int { return strings.Compare(a.Name, b.Name) })
	for _, e := range ents {
		childRel := e.Name
		if rel != "" {
			childRel = rel + "/" + e.Name
		}
		if e.Link && w.opt.Links {
			w.link(childRel, e.Target)
		}
		if e.Special != "" && w.opt.Links && !w.skipped(childRel) {
			if w.found.Special == nil {
				w.found.Special = map[string]string{}
			}
			w.found.Special[childRel] = e.Special
		}
		if e.Name == ".git" {
			if rel != "" && !only { // the top's own: GitConfigTops
				w.found.Git = nestedTopsOf(w.found.Git, childRel, e.Dir)
				if e.Dir {
					w.found.GitDirs = append(w.found.GitDirs, childRel)
				}
			}
			if e.Dir && w.opt.Links { // every git directory, for links alone (linkwalk.go)
				if err := w.dir(abs+"/.git", childRel, true); err != nil {
					return err
				}
			}
			continue
		}
		if rel != "" && !only && isProjectConfigName([]byte(e.Name)) {
			w.found.Config = append(w.found.Config, childRel)
		}
		if !e.Dir || (only && (childRel == w.opt.Skip || gitObjects(childRel))) {
			continue
		}
		if err := w.dir(abs+"/"+e.Name, childRel, only); err != nil {
			return err
		}
	}
	return nil
}

// errSearchable fails the walk at a directory that cannot be listed but
// can be searched, and is not the user's to give the read bit back.
var errSearchable = errors.New("cannot be listed but can be searched (git can use a repository in it by its path): give it read permission (chmod u+r) and check it for a .git yourself")

// unreadable answers for a directory below the top that could not be
// listed (err). git needs no more than search permission on a directory
// to use a .git in it (it stats and opens by path, never lists), so such
// a directory is never passed over: one the user's git cannot search
// either is; one of the user's own (the work tree is theirs: a child may
// have dropped the read bit, `chmod 0311`) gets its owner's read bit
// back and is listed again (Nested.Opened says which), its links with
// it when the walk lists links (review24 P1-2); any other fails the walk.
func (w *nestedWalk) unreadable(abs, rel string, err error) ([]dirents.Entry, error) {
	if _, serr := os.Lstat(abs + "/.git"); errors.Is(serr, fs.ErrPermission) {
		return nil, err // no search permission: passed over
	}
	if giveReadBack(abs) {
		w.found.Opened = append(w.found.Opened, rel)
		return dirents.List(abs, false, w.buf, wanted, w.opt.Links)
	}
	return nil, errSearchable
}

// passOver reports whether a directory that fails with err is passed
// over: it is gone, is no directory (any more: a link put in its place),
// or cannot be read nor searched (unreadable).
func passOver(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) ||
		errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) || errors.Is(err, fs.ErrInvalid)
}

// SnapshotNestedConfig is SnapshotPaths of the project configuration
// found below a work tree's top (Nested.Config, relative to root): what
// is configuration under them is IsConfigPath's, in any case (a nested
// .brood's run records are not).
func SnapshotNestedConfig(root string, tops []string) (*ConfigState, error) {
	return snapshot(&ConfigState{root: root, tops: tops, keep: isNestedConfig, kind: keepNested})
}
