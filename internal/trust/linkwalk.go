package trust

import (
	"errors"
	"io/fs"
	"os"
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
	// the walk could not look for them (Nested.Unseen): everywhere but in
	// a repository's git directory (isGitDir; a .git directory that is
	// none is walked for links alone) and below Skip.
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

// isGitDir reports whether the directory at abs is a repository's git
// directory as git takes one (setup.c's is_git_directory): a HEAD, and
// objects and refs directories (or a commondir holding them). A .git
// directory that is not one is walked for links like any other.
func isGitDir(abs string) bool {
	if fi, err := os.Lstat(abs + "/HEAD"); err != nil || fi.IsDir() {
		return false
	}
	if _, err := os.Lstat(abs + "/commondir"); err == nil {
		return true
	}
	for _, d := range []string{"/objects", "/refs"} {
		if fi, err := os.Stat(abs + d); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}
