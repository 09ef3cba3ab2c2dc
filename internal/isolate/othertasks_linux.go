package isolate

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// coverTasks mounts an empty tmpfs over the dispatch directory tasks (no
// link on the way), makes in it the mount point of the child's own task
// directory (name, in tasks; own: a handle on it opened before any mount,
// so the bind is the real directory) and binds own there, then makes the tmpfs read-only:
// the child sees its own task directory and no other.
func coverTasks(tasks, name string, own int) error {
	dst, err := openNoLinks(tasks)
	if err != nil {
		return fmt.Errorf("isolate: open %s to cover the other tasks: %w", tasks, err)
	}
	defer unix.Close(dst)
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("tmpfs", fdPath(dst), "tmpfs", flags, "size=16k,nr_inodes=16,mode=0755"); err != nil {
		return fmt.Errorf("isolate: cover the other tasks in %s: %w", tasks, err)
	}
	top, err := openNoLinks(tasks)
	if err != nil {
		return fmt.Errorf("isolate: open %s after covering it: %w", tasks, err)
	}
	defer unix.Close(top)
	if err := unix.Mkdirat(top, name, 0o755); err != nil {
		return fmt.Errorf("isolate: make the task directory's mount point in %s: %w", tasks, err)
	}
	point, err := unix.Openat(top, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("isolate: open the task directory's mount point in %s: %w", tasks, err)
	}
	defer unix.Close(point)
	if err := unix.Mount(fdPath(own), fdPath(point), "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("isolate: bind the task directory into %s: %w", tasks, err)
	}
	if err := unix.Mount("", fdPath(top), "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|flags, ""); err != nil {
		return fmt.Errorf("isolate: make the cover of %s read-only: %w", tasks, err)
	}
	return nil
}
