package isolate

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// pinAncestors makes every directory between a tree (the longest of roots
// holding it) and each of paths a mount point of its own, by binding it
// over itself in the child's mount namespace (writable as before). A
// mount point cannot be renamed (EBUSY), so a path a view holds
// read-only or covers can neither be moved away (a Read-denied file to
// a name no rule matches, for the next child to read) nor have a
// directory above it moved aside and made anew (an Edit-denied path
// written in a fresh directory): review40 P1-A, P1-B. Each bind is
// recursive, so the binds already beneath a directory (a read-only file)
// are carried onto its pin with their flags; call it after the view's
// binds (one of theirs above a pin would hide it) and before its covers.
// A path not under any root, or a directory missing or reached through a
// link, is left.
func pinAncestors(paths, roots []string) error {
	var dirs []string
	for _, p := range paths {
		root := ""
		for _, r := range roots {
			if within(r, p) && len(r) > len(root) {
				root = r
			}
		}
		if root == "" {
			continue
		}
		for d := filepath.Dir(p); d != root && within(root, d); d = filepath.Dir(d) {
			if !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	slices.SortStableFunc(dirs, func(a, b string) int {
		return strings.Count(a, "/") - strings.Count(b, "/")
	})
	for _, d := range dirs {
		fd, err := openNoLinks(d)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) {
			continue
		}
		if err != nil {
			return fmt.Errorf("isolate: open %s to pin it: %w", d, err)
		}
		err = unix.Mount(fdPath(fd), fdPath(fd), "", unix.MS_BIND|unix.MS_REC, "")
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("isolate: pin %s (above a path the view holds): %w", d, err)
		}
	}
	return nil
}
