package taskdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Durable is a record already in place (written and renamed: every process
// reads it, and a crash of brood loses nothing) whose fsync, of the file and
// then of its directory, runs in the background. Only a power cut (or a
// kernel crash) before Wait returns can lose it. A nil Durable is durable.
type Durable struct {
	done chan struct{}
	err  error
}

// Wait blocks until the record is on disk and says whether it got there.
func (d *Durable) Wait() error {
	if d == nil {
		return nil
	}
	<-d.done
	return d.err
}

// WriteOwnerDurable writes task id's owner record as WriteOwner does, but
// returns once it is renamed into place, unsynced; its fsync (file, then the
// records directory, which WriteOwner never synced) runs in the background.
// The caller waits for it before it writes anything that claims the task
// ran (its verdict), so a power cut can lose a task's owner record only
// while nothing recorded depends on it.
func (r Records) WriteOwnerDurable(id string, v any) (*Durable, error) {
	name := id + ownerSuffix
	if err := CheckID(id); err != nil {
		return nil, err
	}
	data, err := encode(name, v)
	if err != nil {
		return nil, err
	}
	rel := filepath.Join(r.rel, name)
	d, err := writeBeneathDurable(r.project.base, rel, data)
	if !errors.Is(err, fs.ErrNotExist) {
		return d, err
	}
	if err := mkdirModeBeneath(r.project.base, r.rel, taskDirMode); err != nil {
		return nil, err
	}
	return writeBeneathDurable(r.project.base, rel, data)
}

// writeBeneathDurable is writeBeneath without the fsync on the caller's
// path: the file's and its directory's run in a goroutine of their own, on
// descriptors opened here (the directory's as the rename saw it, never
// looked up again).
func writeBeneathDurable(root, rel string, data []byte) (*Durable, error) {
	pfd, base, err := openParent(root, rel)
	if err != nil {
		return nil, err
	}
	full := filepath.Join(root, rel)
	dfd, err := unix.Openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	unix.Close(pfd)
	if err != nil {
		return nil, pathErr("open", filepath.Dir(full), err)
	}
	tmp := tmpName(base)
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, recordMode)
	if err != nil {
		unix.Close(dfd)
		return nil, pathErr("create", full, err)
	}
	f := os.NewFile(uintptr(fd), full)
	_, err = f.Write(data)
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, base)
	}
	if err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		f.Close()
		unix.Close(dfd)
		return nil, pathErr("write", full, err)
	}
	d := &Durable{done: make(chan struct{})}
	go func() {
		defer close(d.done)
		defer unix.Close(dfd)
		err := f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = unix.Fsync(dfd)
		}
		if err != nil {
			d.err = pathErr("sync", full, err)
		}
	}()
	return d, nil
}
