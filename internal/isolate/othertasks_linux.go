package isolate

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/taskdir"
	"golang.org/x/sys/unix"
)

// coverTasks mounts an empty tmpfs over the dispatch directory tasks (no
// link on the way), makes in it the mount point of the child's own task
// directory (at own's path beneath tasks: <id>, or nested,
// <parent id>/tasks/<id>; ownFD: a handle on it opened before any mount,
// so the bind is the real directory) and binds it there, then makes the
// tmpfs read-only: the child sees its own task directory and no other.
func coverTasks(tasks, own string, ownFD int) error {
	_, rel, ok := taskdir.SplitTaskPath(own)
	if !ok {
		return fmt.Errorf("isolate: %s is not a task directory to keep in %s", own, tasks)
	}
	dst, err := openNoLinks(tasks)
	if err != nil {
		return fmt.Errorf("isolate: open %s to cover the other tasks: %w", tasks, err)
	}
	defer unix.Close(dst)
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("tmpfs", fdPath(dst), "tmpfs", flags, "size=16k,nr_inodes=32,mode=0755"); err != nil {
		return fmt.Errorf("isolate: cover the other tasks in %s: %w", tasks, err)
	}
	top, err := openNoLinks(tasks)
	if err != nil {
		return fmt.Errorf("isolate: open %s after covering it: %w", tasks, err)
	}
	defer unix.Close(top)
	point, err := mountPoint(top, rel)
	if err != nil {
		return fmt.Errorf("isolate: make the task directory's mount point in %s: %w", tasks, err)
	}
	defer unix.Close(point)
	if err := unix.Mount(fdPath(ownFD), fdPath(point), "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("isolate: bind the task directory into %s: %w", tasks, err)
	}
	if err := unix.Mount("", fdPath(top), "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|flags, ""); err != nil {
		return fmt.Errorf("isolate: make the cover of %s read-only: %w", tasks, err)
	}
	return nil
}

// mountPoint makes the directories of rel (a path of a few components)
// in the fresh tmpfs top, and opens the last.
func mountPoint(top int, rel string) (int, error) {
	fd := top
	for i, name := range strings.Split(rel, string(filepath.Separator)) {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			if i > 0 {
				unix.Close(fd)
			}
			return -1, err
		}
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if i > 0 {
			unix.Close(fd)
		}
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// coverEmpty mounts an empty read-only tmpfs over each directory of dirs
// (no link on the way): the child sees none of what they hold. One that
// does not exist (no records yet; whited out in an overlay) is left: a
// writer's view holds .brood read-only, so it cannot make one.
func coverEmpty(dirs []string) error {
	for _, d := range dirs {
		fd, err := openNoLinks(d)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("isolate: open %s to cover it: %w", d, err)
		}
		const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_RDONLY
		err = unix.Mount("tmpfs", fdPath(fd), "tmpfs", flags, "size=4k,nr_inodes=1,mode=0755")
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("isolate: cover %s: %w", d, err)
		}
	}
	return nil
}
