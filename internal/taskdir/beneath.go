package taskdir

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrLink means a path the parent was about to use held a symbolic link (or
// left the project): the parent never follows one in a child-writable place.
var ErrLink = errors.New("a symbolic link is in the way (brood never follows links in a task directory)")

const defaultMax = 64 << 20

func encode(name string, v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", filepath.Base(name), err)
	}
	return append(data, '\n'), nil
}

// pathErr names the file and says plainly when a link was refused.
func pathErr(op, path string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return &fs.PathError{Op: op, Path: path, Err: ErrLink}
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

func clean(rel string) ([]string, error) {
	rel = filepath.Clean(rel)
	if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("taskdir: %q is not beneath the project", rel)
	}
	return strings.Split(rel, string(filepath.Separator)), nil
}

// openRoot opens the project root itself: the user's directory, trusted (it
// may legitimately be reached through a link, such as a linked home).
func openRoot(root string) (int, error) {
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	return fd, nil
}

// openAt opens rel beneath dirfd without following any link on the way:
// openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, or component by component
// with O_NOFOLLOW where the kernel has no openat2.
func openAt(dirfd int, rel string, flags int, mode uint32) (int, error) {
	parts, err := clean(rel)
	if err != nil {
		return -1, err
	}
	flags |= unix.O_CLOEXEC | unix.O_NOFOLLOW
	for range 8 {
		fd, err := openat2(dirfd, strings.Join(parts, "/"), flags, mode)
		if err == unix.EAGAIN || err == unix.EINTR {
			continue // a concurrent rename: try again
		}
		if err == unix.ENOTDIR && flags&unix.O_DIRECTORY != 0 {
			err = unix.ELOOP // a link (or a file) where a directory should be
		}
		if err != unix.ENOSYS && err != unix.EPERM {
			return fd, err
		}
		break
	}
	cur := dirfd
	for i, p := range parts {
		if p == "." {
			continue
		}
		last := i == len(parts)-1
		f := unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		var m uint32
		if last {
			f, m = flags, mode
		}
		fd, err := unix.Openat(cur, p, f, m)
		if cur != dirfd {
			unix.Close(cur)
		}
		if err != nil {
			if errors.Is(err, unix.ENOTDIR) && (!last || flags&unix.O_DIRECTORY != 0) {
				err = unix.ELOOP // a link (or a file) where a directory should be
			}
			return -1, err
		}
		cur = fd
	}
	if cur == dirfd {
		return unix.Openat(dirfd, ".", flags, mode)
	}
	return cur, nil
}

// openParent opens the directory that holds rel, and returns its last name.
func openParent(root, rel string) (int, string, error) {
	rfd, err := openRoot(root)
	if err != nil {
		return -1, "", err
	}
	defer unix.Close(rfd)
	dir, base := filepath.Split(filepath.Clean(rel))
	if base == "" || base == "." || base == ".." {
		return -1, "", fmt.Errorf("taskdir: bad name %q", rel)
	}
	if dir == "" {
		fd, err := unix.Openat(rfd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return fd, base, err
	}
	fd, err := openAt(rfd, dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, "", pathErr("open", filepath.Join(root, dir), err)
	}
	return fd, base, nil
}

func readBeneath(root, rel string, max int64) ([]byte, error) {
	if max <= 0 {
		max = defaultMax
	}
	full := filepath.Join(root, rel)
	f, err := openRegularBeneath(root, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: full, Err: err}
	}
	if int64(len(data)) > max {
		return nil, &fs.PathError{Op: "read", Path: full, Err: fmt.Errorf("larger than %d bytes", max)}
	}
	return data, nil
}

// openRegularBeneath opens a regular file beneath root for reading,
// without following a link anywhere on the way and without blocking (a
// FIFO planted in place of a record must not hang us).
func openRegularBeneath(root, rel string) (*os.File, error) {
	full := filepath.Join(root, rel)
	rfd, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer unix.Close(rfd)
	fd, err := openAt(rfd, rel, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, pathErr("open", full, err)
	}
	f := os.NewFile(uintptr(fd), full)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: full, Err: ErrNotRegular}
	}
	return f, nil
}

// ErrNotRegular is a record's name holding something other than a regular
// file (a FIFO, a socket, a device): brood never makes one, so a child or
// the repository did, and brood never reads it.
var ErrNotRegular = errors.New("not a regular file (brood never made it: a child or the repository did; brood ignores it)")

func readJSONBeneath(root, rel string, v any) error {
	data, err := readBeneath(root, rel, 0)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &ParseError{Path: filepath.Join(root, rel), Err: err}
	}
	return nil
}

// ParseError is a record that exists but is not valid JSON for its type.
type ParseError struct {
	Path string
	Err  error
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s does not parse: %v", e.Path, e.Err) }
func (e *ParseError) Unwrap() error { return e.Err }

// taskDirMode and recordMode are a task directory's and a record's: its
// envelope keeps the whole brief, secrets included, and its transcript
// and result what the child read; readable by their owner alone.
const (
	taskDirMode = 0o700
	recordMode  = 0o600
)

func writeBeneath(root, rel string, data []byte, sync bool) error {
	return writeBeneathMode(root, rel, data, sync, 0o644)
}

// writeBeneathMode is writeBeneath of a file made with mode perm.
func writeBeneathMode(root, rel string, data []byte, sync bool, perm uint32) error {
	dfd, base, err := openParent(root, rel)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	full := filepath.Join(root, rel)
	tmp := tmpName(base)
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return pathErr("create", full, err)
	}
	f := os.NewFile(uintptr(fd), full)
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, base)
	}
	if err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return pathErr("write", full, err)
	}
	return nil
}

// tmpName is a fresh temporary name beside base, for a tmp+rename write.
func tmpName(base string) string {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	return "." + base + ".tmp" + hex.EncodeToString(rnd[:])
}

func createFreshBeneath(root, rel string) (*os.File, error) {
	if err := removeBeneath(root, rel); err != nil {
		return nil, err
	}
	dfd, base, err := openParent(root, rel)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	full := filepath.Join(root, rel)
	fd, err := unix.Openat(dfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, pathErr("create", full, err)
	}
	return os.NewFile(uintptr(fd), full), nil
}

// removeBeneath removes whatever is at rel: a link itself (never its
// target), a file, or a directory with everything in it.
func removeBeneath(root, rel string) error {
	dfd, base, err := openParent(root, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := removeAt(dfd, base); err != nil {
		return pathErr("remove", filepath.Join(root, rel), err)
	}
	return nil
}

func removeAt(dfd int, name string) error {
	err := unix.Unlinkat(dfd, name, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	// A directory, most often empty (a child's tmp/): one rmdir, and the
	// walk only for one with entries.
	if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err == nil || err == unix.ENOENT {
		return nil
	}
	fd, err := openDirAt(dfd, name)
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(fd), name)
	names, err := d.Readdirnames(-1)
	if err == nil {
		for _, n := range names {
			err = removeAt(fd, n)
			if err == unix.EACCES {
				// A directory made unwritable (go's module cache is,
				// in a writer's TMPDIR): made the owner's to empty
				// (through the descriptor: no link is followed).
				if err = unix.Fchmod(fd, 0o700); err == nil {
					err = removeAt(fd, n)
				}
			}
			if err != nil {
				break
			}
		}
	}
	d.Close()
	if err != nil {
		return err
	}
	if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return err
	}
	return nil
}

// openDirAt opens the directory name in dfd to read, never through a
// link; one its owner cannot read (mode 0, which a child can make in its
// TMPDIR) is made the owner's first, through an O_PATH descriptor of the
// directory itself (its /proc/self/fd link: no name is followed twice).
func openDirAt(dfd int, name string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dfd, name, flags, 0)
	if err != unix.EACCES {
		return fd, err
	}
	pfd, perr := unix.Openat(dfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if perr != nil {
		return -1, err
	}
	cerr := unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", pfd), 0o700)
	unix.Close(pfd)
	if cerr != nil {
		return -1, err
	}
	return unix.Openat(dfd, name, flags, 0)
}

func mkdirBeneath(root, rel string) error { return mkdirModeBeneath(root, rel, 0o755) }

// mkdirLeafBeneath makes rel's last component in its parent, which must
// exist (fs.ErrNotExist if not), refusing a link on the way; a real
// directory there already is no error.
func mkdirLeafBeneath(root, rel string, perm os.FileMode) error {
	dfd, base, err := openParent(root, rel)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	full := filepath.Join(root, rel)
	err = unix.Mkdirat(dfd, base, uint32(perm.Perm()))
	if err == nil {
		return nil
	}
	if err != unix.EEXIST {
		return pathErr("mkdir", full, err)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return pathErr("mkdir", full, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return pathErr("mkdir", full, unix.ELOOP) // a link (or a file) where the directory should be
	}
	return nil
}

// mkdirModeBeneath makes rel and its parents, refusing a link on the way.
func mkdirModeBeneath(root, rel string, perm os.FileMode) error {
	parts, err := clean(rel)
	if err != nil {
		return err
	}
	cur, err := openRoot(root)
	if err != nil {
		return err
	}
	defer func() { unix.Close(cur) }()
	for i, p := range parts {
		mode := uint32(0o755)
		if i == len(parts)-1 {
			mode = uint32(perm.Perm())
		}
		if err := unix.Mkdirat(cur, p, mode); err != nil && err != unix.EEXIST {
			return pathErr("mkdir", filepath.Join(append([]string{root}, parts[:i+1]...)...), err)
		}
		fd, err := unix.Openat(cur, p, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if err == unix.ENOTDIR {
				err = unix.ELOOP
			}
			return pathErr("mkdir", filepath.Join(append([]string{root}, parts[:i+1]...)...), err)
		}
		unix.Close(cur)
		cur = fd
	}
	return nil
}

// info is what lstatBeneath says of a path.
type info struct{ mode uint32 }

func (i info) IsDir() bool { return i.mode&unix.S_IFMT == unix.S_IFDIR }

func lstatBeneath(root, rel string) (info, error) {
	dfd, base, err := openParent(root, rel)
	if err != nil {
		return info{}, err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return info{}, pathErr("lstat", filepath.Join(root, rel), err)
	}
	return info{mode: st.Mode}, nil
}

func renameBeneath(root, old, new string) error {
	ofd, obase, err := openParent(root, old)
	if err != nil {
		return err
	}
	defer unix.Close(ofd)
	nfd, nbase, err := openParent(root, new)
	if err != nil {
		return err
	}
	defer unix.Close(nfd)
	if err := unix.Renameat(ofd, obase, nfd, nbase); err != nil {
		return pathErr("rename", filepath.Join(root, old), err)
	}
	return nil
}

// OpenPath opens rel beneath root as an O_PATH descriptor without following
// any link: what a sandbox rule must be built from when the path is
// child-writable. The caller closes it.
func OpenPath(root, rel string) (*os.File, error) {
	return openFileBeneath(root, rel, unix.O_PATH, 0)
}

func openFileBeneath(root, rel string, flags int, mode uint32) (*os.File, error) {
	rfd, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer unix.Close(rfd)
	full := filepath.Join(root, rel)
	fd, err := openAt(rfd, rel, flags, mode)
	if err != nil {
		return nil, pathErr("open", full, err)
	}
	return os.NewFile(uintptr(fd), full), nil
}
