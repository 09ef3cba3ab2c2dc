package trust

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// errLinkedParent is why a put-back path is left as it is: a directory on
// the way to it is a link (or not a directory), so writing there could land
// outside the tree.
var errLinkedParent = errors.New("a directory on the way is a link or not a directory: left as is")

// parentRoot opens, beneath the tree root, the directory that holds rel,
// one component at a time and following no link on the way: each
// component must be a real directory (Lstat), and the directory opened must
// be the one seen (SameFile), so a swap between the two is refused too. It
// returns the opened directory (the caller closes it) and rel's last name.
func (c *ConfigState) parentRoot(rel string) (*os.Root, string, error) {
	r, err := os.OpenRoot(c.root)
	if err != nil {
		return nil, "", err
	}
	dir, base := path.Split(path.Clean(rel))
	if dir == "" {
		return r, base, nil
	}
	for _, seg := range splitDirs(dir) {
		next, err := descend(r, seg)
		r.Close()
		if err != nil {
			return nil, "", fmt.Errorf("config restore: %s: %w", rel, err)
		}
		r = next
	}
	return r, base, nil
}

func splitDirs(dir string) []string {
	var out []string
	for dir = path.Clean(dir); dir != "." && dir != "/"; dir = path.Dir(dir) {
		out = append([]string{path.Base(dir)}, out...)
	}
	return out
}

// descend opens seg under r only if it is a directory and not a link.
func descend(r *os.Root, seg string) (*os.Root, error) {
	seen, err := r.Lstat(seg)
	if err != nil {
		return nil, err
	}
	if !seen.IsDir() {
		return nil, errLinkedParent
	}
	next, err := r.OpenRoot(seg)
	if err != nil {
		return nil, err
	}
	opened, err := next.Stat(".")
	if err != nil || !os.SameFile(seen, opened) {
		next.Close()
		return nil, errLinkedParent
	}
	return next, nil
}

// removeOne is Restore's first pass for one path: a directory that is
// still one gets its mode back; anything else is removed (a link, not its
// target) — all beneath the tree, following no link on the way.
func (c *ConfigState) removeOne(rel string, e configEntry, had bool) error {
	r, base, err := c.parentRoot(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errLinkedParent) {
			return nil // nothing of the tree's to remove there; put says if it cannot write
		}
		return err
	}
	defer r.Close()
	if had && e.mode.IsDir() {
		if info, err := r.Lstat(base); err == nil && info.IsDir() {
			return r.Chmod(base, e.mode.Perm()) // a directory stays; its entries are handled one by one
		}
	}
	if c.aside != "" {
		if _, err := r.Lstat(base); err == nil {
			if err := putAside(r, base, filepath.Join(c.aside, filepath.FromSlash(rel))); err != nil {
				return fmt.Errorf("config restore: %s: not put aside (%v): left as is", rel, err)
			}
			return nil
		}
	}
	return r.RemoveAll(base)
}

// PutAside makes Restore move what it removes or replaces to dir (made
// 0700), under its path in the tree, instead of removing it.
func (c *ConfigState) PutAside(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.aside = dir
}

// putAside renames base of r to dest (its parents made 0700), following no
// link: renameat on the directory r opened.
func putAside(r *os.Root, base, dest string) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return err
	}
	d, err := r.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Renameat(int(d.Fd()), base, unix.AT_FDCWD, dest)
}

// put recreates one snapshot entry whose parent directories exist (the
// snapshot's own parents come first), beneath the tree and following no
// link on the way.
func (c *ConfigState) put(rel string, e configEntry) error {
	r, base, err := c.parentRoot(rel)
	if err != nil {
		return err
	}
	defer r.Close()
	switch {
	case e.mode.IsDir():
		if err := r.Mkdir(base, e.mode.Perm()); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	case e.mode&fs.ModeSymlink != 0:
		return r.Symlink(e.link, base)
	case e.mode.IsRegular():
		tmp := base + ".brood-restore"
		r.Remove(tmp)
		if err := r.WriteFile(tmp, e.data, e.mode.Perm()); err != nil {
			return err
		}
		if err := r.Chmod(tmp, e.mode.Perm()); err != nil {
			r.Remove(tmp)
			return err
		}
		return r.Rename(tmp, base)
	}
	return nil
}
