package isolate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// writeOnly makes every mount of a writer's own mount namespace read-only
// but roots, the directories its Landlock rules let it write (its tree or
// copy, its task directory with its TMPDIR, its Go caches, its added
// directories: View.Writes). Landlock does not govern a file's mode, owner,
// times or extended attributes: on a read-only mount chmod, chown, utimes
// and setxattr fail with EROFS, so outside its roots a writer changes no
// file's metadata either (redteam21 P1-1), while a device node's writes
// (/dev/null, a terminal) do not depend on the mount. Each root is bound
// over itself with the mounts beneath it (shallower first, from a handle
// opened with no symbolic link on the way), every mount from / down is
// made read-only (mount_setattr, AT_RECURSIVE), then each root's binds
// read-write again. A mount beneath a root that was read-only when the
// namespace was made keeps that flag: the kernel locks it (a user
// namespace's mounts cannot be made writable again), so that root's own
// bind alone is made writable. The child's Landlock domain and syscall
// filter, added next, forbid it to remount anything. It runs right after
// the mounts were made private, before the view's own binds and covers,
// which then behave as they did.
func writeOnly(roots []string) error {
	paths := outermost(roots)
	if len(paths) == 0 {
		return nil
	}
	for _, p := range paths {
		if err := bindSelfRec(p); err != nil {
			return err
		}
	}
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &ro); err != nil {
		return fmt.Errorf("isolate: make every mount but the writer's own read-only (mount_setattr, Linux 5.12 or later): %w", err)
	}
	rw := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	for _, p := range paths {
		top, err := openNoLinks(p) // the bind's root
		if err != nil {
			return fmt.Errorf("isolate: open %s after binding it: %w", p, err)
		}
		err = unix.MountSetattr(top, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &rw)
		if errors.Is(err, unix.EPERM) {
			// A mount beneath it is locked read-only: it stays so, and
			// the others beneath it with it (said on the child's
			// stderr: its writes there fail with EROFS).
			err = unix.MountSetattr(top, "", unix.AT_EMPTY_PATH, &rw)
			if err == nil {
				fmt.Fprintf(os.Stderr, "brood: %s is writable but the mounts beneath it are read-only (one of them was read-only before): writes there fail\n", p)
			}
		}
		if errors.Is(err, unix.EPERM) {
			// The root itself is on a mount read-only before this
			// namespace was made (locked): nothing there was writable.
			fmt.Fprintf(os.Stderr, "brood: %s, which this child may write, is on a read-only mount: writes there fail\n", p)
			err = nil
		}
		unix.Close(top)
		if err != nil {
			return fmt.Errorf("isolate: make %s writable again: %w", p, err)
		}
	}
	return nil
}

// bindSelfRec binds the directory p over itself with the mounts beneath
// it, refusing a symbolic link anywhere on the way.
func bindSelfRec(p string) error {
	fd, err := openNoLinks(p)
	if err != nil {
		return fmt.Errorf("isolate: open %s, a directory the writer writes, to bind it: %w", p, err)
	}
	defer unix.Close(fd)
	if err := unix.Mount(fdPath(fd), fdPath(fd), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("isolate: bind %s over itself: %w", p, err)
	}
	return nil
}

// outermost is roots, cleaned, without any that lies within another (its
// bind is the outer one's), shallower first.
func outermost(roots []string) []string {
	var out []string
	for _, r := range roots {
		r = filepath.Clean(r)
		if !filepath.IsAbs(r) || slices.Contains(out, r) {
			continue
		}
		out = append(out, r)
	}
	out = slices.DeleteFunc(out, func(r string) bool {
		return slices.ContainsFunc(out, func(o string) bool { return o != r && within(o, r) })
	})
	slices.SortStableFunc(out, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	return out
}
