package isolate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// preimages are the paths a landing may write, as they were before it:
// what a landing that fails partway (git apply wrote some files, then
// could not write the next: a directory that became a file, a full disk,
// a permission) puts back, so a landing is whole or nothing.
// They are kept in memory: the task's directory, where the patch is
// saved, is one a delegating sibling can write.
type preimages struct {
	top   string
	paths []preimage
}

// preimage is one path before the landing.
type preimage struct {
	rel  string
	kind byte // 'f' regular file, 'l' link, '-' absent, 'o' other (a directory: never touched)
	mode fs.FileMode
	link string
	data []byte
	made string // the first of its directories that did not exist (made by the landing), "" if none
}

// savePreimages records every path of entries under the tree at top.
func savePreimages(top string, entries []rawEntry) (*preimages, error) {
	p := &preimages{top: top}
	for _, e := range entries {
		pi, err := p.save(e.path)
		if err != nil {
			return nil, fmt.Errorf("isolate: keep %s before the landing (nothing was applied): %w", e.path, err)
		}
		p.paths = append(p.paths, pi)
	}
	return p, nil
}

func (p *preimages) save(rel string) (preimage, error) {
	pi := preimage{rel: rel}
	if beyondLink(p.top, rel) {
		// git writes nothing beyond a link (it refuses the patch), and
		// nothing is put back through one.
		pi.kind = 'o'
		return pi, nil
	}
	abs := filepath.Join(p.top, filepath.FromSlash(rel))
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		pi.kind = '-'
		pi.made = firstMissing(p.top, rel)
		return pi, nil
	case err != nil:
		return pi, err
	case fi.Mode()&fs.ModeSymlink != 0:
		pi.kind = 'l'
		pi.link, err = os.Readlink(abs)
		return pi, err
	case !fi.Mode().IsRegular():
		pi.kind = 'o'
		return pi, nil
	}
	pi.kind, pi.mode = 'f', fi.Mode().Perm()
	pi.data, err = readRegular(abs)
	return pi, err
}

// beyondLink reports whether one of rel's directories under top is a
// symbolic link.
func beyondLink(top, rel string) bool {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(strings.Join(parts[:i], "/"))))
		if err != nil {
			return false
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// firstMissing is the first directory of rel's (repository-relative) that
// does not exist under top, "" when they all do.
func firstMissing(top, rel string) string {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		if _, err := os.Lstat(filepath.Join(top, filepath.FromSlash(d))); err != nil {
			return d
		}
	}
	return ""
}

// readRegular reads the regular file at path, following no link at its end.
func readRegular(path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// same reports whether the path is as it was before the landing.
func (p *preimages) same(pi preimage) bool {
	abs := filepath.Join(p.top, filepath.FromSlash(pi.rel))
	fi, err := os.Lstat(abs)
	switch pi.kind {
	case '-':
		return err != nil
	case 'o':
		return true // never written: git writes no file over a directory
	case 'l':
		t, lerr := os.Readlink(abs)
		return err == nil && lerr == nil && t == pi.link
	}
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != pi.mode || fi.Size() != int64(len(pi.data)) {
		return false
	}
	now, err := readRegular(abs)
	return err == nil && bytes.Equal(now, pi.data)
}

// restore puts back every path that is no longer as it was, and removes
// the directories the landing made for them (when empty). It returns how
// many it put back and those it could not (path: why).
func (p *preimages) restore() (int, []string) {
	n := 0
	var failed []string
	for i := len(p.paths) - 1; i >= 0; i-- {
		pi := p.paths[i]
		if p.same(pi) {
			continue
		}
		if err := p.put(pi); err != nil {
			failed = append(failed, pi.rel+": "+err.Error())
			continue
		}
		n++
	}
	for _, pi := range p.paths {
		if pi.made != "" {
			removeEmptyUp(p.top, filepath.Dir(filepath.FromSlash(pi.rel)), pi.made)
		}
	}
	return n, failed
}

// put makes the path what it was.
func (p *preimages) put(pi preimage) error {
	abs := filepath.Join(p.top, filepath.FromSlash(pi.rel))
	if fi, err := os.Lstat(abs); err == nil && fi.IsDir() {
		// A file the patch turned into a directory: empty by now (its
		// files were put back first, last first), or not the landing's.
		if err := os.Remove(abs); err != nil {
			return fmt.Errorf("it is a directory now")
		}
	}
	switch pi.kind {
	case '-':
		err := os.Remove(abs)
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return err
	case 'l':
		tmp := abs + ".brood-restore"
		os.Remove(tmp)
		if err := os.Symlink(pi.link, tmp); err != nil {
			return err
		}
		return renameOrRemove(tmp, abs)
	}
	tmp := abs + ".brood-restore"
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, pi.mode)
	if err != nil {
		return err
	}
	_, err = f.Write(pi.data)
	if err == nil {
		err = f.Chmod(pi.mode) // past the umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return renameOrRemove(tmp, abs)
}

func renameOrRemove(tmp, dst string) error {
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// removeEmptyUp removes dir (under top) and its parents up to and with
// made, each only if empty.
func removeEmptyUp(top, dir, made string) {
	stop := filepath.FromSlash(made)
	for d := dir; d != "." && d != ""; d = filepath.Dir(d) {
		if os.Remove(filepath.Join(top, d)) != nil || d == stop {
			return
		}
	}
}

// keep writes the earlier versions of the paths named in failed (as
// restore returns them) into a new directory (0700) under dir named
// prefix+"before-landing-…" for the user, and returns it; "" when it could
// not write every one (the directory is then removed: a partial copy
// would be taken for the whole).
func (p *preimages) keep(dir, prefix string, failed []string) string {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	d, err := os.MkdirTemp(dir, prefix+"before-landing-")
	if err != nil {
		return ""
	}
	for _, pi := range p.paths {
		if pi.kind != 'f' || !slices.ContainsFunc(failed, func(f string) bool { return strings.HasPrefix(f, pi.rel+": ") }) {
			continue
		}
		dst := filepath.Join(d, filepath.FromSlash(pi.rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err == nil {
			err = os.WriteFile(dst, pi.data, 0o600)
		}
		if err != nil {
			_ = os.RemoveAll(d)
			return ""
		}
	}
	return d
}
