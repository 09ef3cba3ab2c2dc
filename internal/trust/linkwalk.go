package trust

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// The in-place writer's link pass rides on the walk for nested
// repositories (NestedWalk with WalkOptions.Links): getdents gives every
// entry's type, so a symbolic link costs one readlink and nothing else
// does, and a writer's tree is read once before it and once after it,
// not twice each.

// WalkOptions says what NestedWalk collects besides NestedTops's.
type WalkOptions struct {
	// Links collects the tree's symbolic links (Nested.Links) and where
	// the walk could not look for them (Nested.Unseen): everywhere but
	// below Skip and in a git directory's object fan-out and packs
	// (gitObjects). A .git directory, the top's, a nested repository's
	// or one that is none, is walked for links alone: git writes its
	// logs, COMMIT_EDITMSG, FETCH_HEAD and the like through a link there,
	// and makes no link there itself (review24 P1-1).
	Links bool
	// Only walks for links alone (Links implied): nothing of NestedTops's
	// is recorded, no read bit given back, and a directory below the top
	// that cannot be read is Unseen, not the walk's failure.
	Only bool
	// Skip is a directory (relative to the top, slash-separated) whose
	// links are not collected: the project's own state directory
	// (.brood), where brood keeps its records and its children their task
	// directories. A link at Skip itself is.
	Skip string
}

// Unseen is a directory (relative to the walk's top) below which a walk
// saw no link, and why.
type Unseen struct{ Dir, Why string }

// link records the link at rel (target) unless it is below Skip.
func (w *nestedWalk) link(rel, target string) {
	if w.skipped(rel) {
		return
	}
	if w.found.Links == nil {
		w.found.Links = map[string]string{}
	}
	w.found.Links[rel] = target
}

func (w *nestedWalk) skipped(rel string) bool {
	return w.opt.Skip != "" && strings.HasPrefix(rel, w.opt.Skip+"/")
}

// unseen records the directory at rel that could not be read (err) as a
// place the walk saw no link in, unless it is gone, no directory any
// more (a link put in its place is recorded as one), or out of reach of
// every process of this user (unreachable): a writer, which runs as the
// user, cannot have written below it either.
func (w *nestedWalk) unseen(abs, rel string, err error) {
	switch {
	case !w.opt.Links || w.skipped(rel) || errors.Is(err, fs.ErrNotExist):
		return
	case errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) || errors.Is(err, fs.ErrInvalid):
		if t, lerr := os.Readlink(abs); lerr == nil {
			w.link(rel, t)
		}
		return
	case errors.Is(err, fs.ErrPermission) && unreachable(abs):
		return
	}
	why := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		why = pe.Err.Error()
	}
	w.found.Unseen = append(w.found.Unseen, Unseen{Dir: rel, Why: why})
}

// unreachable reports whether the directory at abs can be neither
// searched by this user nor given permission back by it (not its own).
func unreachable(abs string) bool {
	if _, err := os.Lstat(abs + "/.git"); !errors.Is(err, fs.ErrPermission) {
		return false
	}
	return !ownDir(abs)
}

// gitObjects reports whether the directory at rel is a git directory's
// loose object fan-out (objects/xx) or its packs (objects/pack), below a
// .git: git only reads there, and writes a new file beside a link, never
// through it, so a link there makes no write out of the tree and the pass
// does not list the many entries. A link in place of such a directory is
// listed like any other.
func gitObjects(rel string) bool {
	dir, name := path.Split(rel)
	if !strings.HasSuffix("/"+dir, "/objects/") || !strings.HasPrefix(rel, ".git/") && !strings.Contains(rel, "/.git/") {
		return false
	}
	if name == "pack" {
		return true
	}
	return len(name) == 2 && strings.Trim(name, "0123456789abcdef") == ""
}
