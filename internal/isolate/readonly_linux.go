package isolate

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// enterReadOnly builds a read-only child's view in its own mount
// namespace: each writable directory bound over itself (shallower first,
// from a handle opened before any mount, onto a target opened with no
// symbolic link on the way), then every mount from / down made read-only
// (mount_setattr, AT_RECURSIVE), then the writable binds alone made
// read-write again. The child's Landlock layer and syscall filter, added
// next, forbid it to change any mount again.
func enterReadOnly(writable []string) error {
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("isolate: make mounts private: %w", err)
	}
	paths := append([]string(nil), writable...)
	sort.SliceStable(paths, func(i, j int) bool {
		return strings.Count(paths[i], "/") < strings.Count(paths[j], "/")
	})
	for _, p := range paths {
		src, err := openNoLinks(p)
		if err != nil {
			return fmt.Errorf("isolate: open %s to hold it: %w", p, err)
		}
		err = bindOver(src, p, false)
		unix.Close(src)
		if err != nil {
			return err
		}
	}
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &ro); err != nil {
		return fmt.Errorf("isolate: make every mount read-only (mount_setattr, Linux 5.12 or later): %w", err)
	}
	rw := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	for _, p := range paths {
		top, err := openNoLinks(p) // the bind's root
		if err != nil {
			return fmt.Errorf("isolate: open %s after binding it: %w", p, err)
		}
		err = unix.MountSetattr(top, "", unix.AT_EMPTY_PATH, &rw)
		unix.Close(top)
		if err != nil {
			return fmt.Errorf("isolate: make %s writable again: %w", p, err)
		}
	}
	return os.Setenv(roViewVar, strconv.Itoa(os.Getpid()))
}
