package isolate

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// bindView builds an in-place writer's view in its own mount namespace:
// every path of v bound over itself, shallower first (so the task
// directory's read-write bind lands on the read-only .brood, not under
// it), from a handle opened before any mount (so a read-write bind comes
// from the tree's own mount, not from a read-only one above it), onto a
// target opened with no symbolic link on the way (a sibling writer cannot
// point a bind elsewhere). The read-only ones are then remounted read-only,
// keeping the flags the mount they came from has. The child's Landlock
// layer, added next, forbids it to change any mount again.
func bindView(v View) error {
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("isolate: make mounts private: %w", err)
	}
	// Every mount but what it writes read-only, first: the binds below
	// then come from its writable roots' binds.
	if err := writeOnly(v.Writes); err != nil {
		return err
	}
	type bind struct {
		path string
		ro   bool
		src  int
	}
	var binds []bind
	defer func() {
		for _, b := range binds {
			unix.Close(b.src)
		}
	}()
	for _, l := range []struct {
		paths []string
		ro    bool
	}{{v.Writable, false}, {v.ReadOnly, true}} {
		for _, p := range l.paths {
			fd, err := openNoLinks(p)
			if err != nil {
				return fmt.Errorf("isolate: open %s to hold it: %w", p, err)
			}
			binds = append(binds, bind{path: p, ro: l.ro, src: fd})
		}
	}
	sort.SliceStable(binds, func(i, j int) bool {
		return strings.Count(binds[i].path, "/") < strings.Count(binds[j].path, "/")
	})
	for _, b := range binds {
		if err := bindOver(b.src, b.path, b.ro); err != nil {
			return err
		}
	}
	// What it holds read-only or covers stays where it is: no directory
	// above it can be renamed (pinAncestors; after the binds, which would
	// otherwise hide a pin beneath one of theirs, such as .git/refs under
	// .git's, and before the covers, which land on the pins).
	if err := pinAncestors(slices.Concat(v.ReadOnly, v.Denied), slices.Concat(v.Writable, v.Within)); err != nil {
		return err
	}
	if err := coverEmpty(v.Covered); err != nil {
		return err
	}
	if err := coverDenied(v.Denied); err != nil {
		return err
	}
	if v.Tasks == "" {
		return nil
	}
	i := slices.IndexFunc(binds, func(b bind) bool { return b.path == v.Own && !b.ro })
	if i < 0 {
		return fmt.Errorf("isolate: the view covers the other tasks but binds no own task directory %s", v.Own)
	}
	return coverTasks(v.Tasks, v.Own, binds[i].src)
}

// bindOver binds the file or directory src onto path (opened anew, with no
// link on the way) and, for ro, remounts the bind read-only.
func bindOver(src int, path string, ro bool) error {
	dst, err := openNoLinks(path)
	if err != nil {
		return fmt.Errorf("isolate: open %s to bind over it: %w", path, err)
	}
	defer unix.Close(dst)
	if err := unix.Mount(fdPath(src), fdPath(dst), "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("isolate: bind %s over itself: %w", path, err)
	}
	if !ro {
		return nil
	}
	top, err := openNoLinks(path) // now the bind's root
	if err != nil {
		return fmt.Errorf("isolate: open %s after binding it: %w", path, err)
	}
	defer unix.Close(top)
	var st unix.Statfs_t
	if err := unix.Fstatfs(top, &st); err != nil {
		return fmt.Errorf("isolate: statfs %s: %w", path, err)
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY)
	// A mount inherited from a more privileged namespace keeps its
	// nosuid, nodev, noexec and atime flags locked: a remount must repeat
	// them.
	for _, f := range []struct{ st, ms int64 }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if st.Flags&f.st != 0 {
			flags |= uintptr(f.ms)
		}
	}
	if err := unix.Mount("", fdPath(top), "", flags, ""); err != nil {
		return fmt.Errorf("isolate: make %s read-only: %w", path, err)
	}
	return nil
}

// openNoLinks opens path as an O_PATH handle, refusing a symbolic link
// anywhere on the way.
func openNoLinks(path string) (int, error) {
	return unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
}

func fdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }
