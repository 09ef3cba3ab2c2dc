package codesnap

import (
	"bytes"
	"encoding/binary"
	"hash"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// statClean reports whether the checkout at tree is provably the tree of
// the verified index (see above), written at stamp (its file's mtime).
func statClean(tree string, index []byte, stamp time.Time, format string) bool {
	p, ok := newStatPlan(index, format)
	return ok && p.clean(tree, stamp)
}

// statPlan is a verified index laid out for the stat check, made once per
// verified checkout (remember): its entries by directory, so a check
// parses nothing and allocates little, and stats each file by its name in
// its open directory (fstatat), not by a path walked from the root.
type statPlan struct {
	entries []indexEntry
	base    []string // each entry's name in its directory
	dirs    []planDir
	newHash func() hash.Hash

	mu sync.Mutex
	// read holds, per directory, its stamp when a check that passed last
	// read its names there (zero: none, or not settled): see clean.
	read []dirStamp
}

// dirStamp is what a directory's lstat says of its names: any name
// added, removed or renamed in it sets its ctime (and mtime) to now.
type dirStamp struct {
	dev, ino     uint64
	ctime, mtime unix.Timespec
}

// settleAge: a directory stamp is kept only when its ctime is older than
// this before the check that read the names began. A file system's clock
// ticks coarsely (jiffies; seconds on some), so a name changed in the same
// tick as the stamp, after the names were read, would leave it as it was;
// one changed later sets a later ctime.
const settleAge = 2 * time.Second

// planDir is one directory the index implies.
type planDir struct {
	name  string // in its parent ("" for the top)
	files []int  // its entries
	kids  []int  // its subdirectories
	// names is how many names it holds: its files and subdirectories,
	// and the top's .git.
	names int
}

// newStatPlan lays a verified index out (ok false: an index the check
// does not handle, see parseIndex).
func newStatPlan(index []byte, format string) (*statPlan, bool) {
	oidLen, newHash := objectHash(format)
	entries, ok := parseIndex(index, oidLen)
	if !ok {
		return nil, false
	}
	p := &statPlan{entries: entries, base: make([]string, len(entries)), dirs: []planDir{{names: 1}}, newHash: newHash}
	at := map[string]int{".": 0}
	var dirOf func(dir string) int
	dirOf = func(dir string) int {
		if d, ok := at[dir]; ok {
			return d
		}
		parent := dirOf(path.Dir(dir))
		d := len(p.dirs)
		p.dirs = append(p.dirs, planDir{name: path.Base(dir)})
		p.dirs[parent].kids = append(p.dirs[parent].kids, d)
		p.dirs[parent].names++
		at[dir] = d
		return d
	}
	for i := range entries {
		if !plainPath(entries[i].path) {
			return nil, false
		}
		if entries[i].gitlink() {
			dirOf(entries[i].path) // an empty directory: no names in it
			continue
		}
		dir, name := path.Split(entries[i].path)
		d := 0
		if dir != "" {
			d = dirOf(strings.TrimSuffix(dir, "/"))
		}
		p.base[i] = name
		p.dirs[d].files = append(p.dirs[d].files, i)
		p.dirs[d].names++
	}
	p.read = make([]dirStamp, len(p.dirs))
	return p, true
}

// plainPath: p is relative and names no empty, . or .. component (git
// writes no other; the plan opens each component as it is).
func plainPath(p string) bool {
	for c := range strings.SplitSeq(p, "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return true
}

// clean reports whether the checkout at tree is provably the plan's
// tree, its index written at stamp. Each directory is opened from its
// parent's descriptor without following a symlink (O_NOFOLLOW, so a
// directory swapped for a link fails) and holds exactly as many names as
// the index implies, each of them there as the index says (the count and
// the presence of every expected name make the sets equal). A directory
// whose stamp (device, inode, ctime, mtime) is the one it had when a
// passing check last read its names, that stamp settled then (its ctime
// over settleAge older than that check's start), holds those names still:
// its names are not read again. Changing a name sets its ctime to now,
// which no unprivileged writer can set back (utimes sets it to now too).
func (p *statPlan) clean(tree string, stamp time.Time) bool {
	fd, err := unix.Open(tree, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstatat(fd, ".git", &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	w := planWalk{p: p, stamp: stamp, buf: make([]byte, 32<<10), settled: time.Now().Add(-settleAge).UnixNano()}
	p.mu.Lock()
	w.read = slices.Clone(p.read)
	p.mu.Unlock()
	if !w.dir(fd, 0) {
		return false
	}
	p.mu.Lock()
	copy(p.read, w.read)
	p.mu.Unlock()
	return true
}

// planWalk is one check of a plan.
type planWalk struct {
	p     *statPlan
	stamp time.Time // the index's
	buf   []byte    // getdents'
	// settled: a directory stamp with a ctime before it (ns) may be kept.
	settled int64
	read    []dirStamp // the plan's, updated as the walk reads names
}

// dir checks the plan's directory d, open as fd.
func (w *planWalk) dir(fd, d int) bool {
	p, dir := w.p, &w.p.dirs[d]
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	now := dirStamp{dev: st.Dev, ino: st.Ino, ctime: st.Ctim, mtime: st.Mtim}
	if w.read[d] != now || now == (dirStamp{}) {
		if n, ok := countNames(fd, w.buf); !ok || n != dir.names {
			return false
		}
		w.read[d] = dirStamp{}
		if st.Ctim.Nano() < w.settled {
			w.read[d] = now
		}
	}
	for _, i := range dir.files {
		if !p.sameFileAt(fd, i, w.stamp) {
			return false
		}
	}
	for _, k := range dir.kids {
		kid, err := unix.Openat(fd, p.dirs[k].name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		ok := w.dir(kid, k)
		unix.Close(kid)
		if !ok {
			return false
		}
	}
	return true
}

// countNames is how many names the directory open as fd holds, besides
// . and .. (getdents64's records: inode, offset, length, type, name).
func countNames(fd int, buf []byte) (n int, ok bool) {
	for {
		got, err := unix.Getdents(fd, buf)
		if err != nil {
			return 0, false
		}
		if got == 0 {
			return n, true
		}
		for off := 0; off < got; {
			if off+19 > got {
				return 0, false
			}
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen == 0 || off+reclen > got {
				return 0, false
			}
			ino := binary.NativeEndian.Uint64(buf[off:])
			name := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if ino != 0 && string(name) != "." && string(name) != ".." {
				n++
			}
		}
	}
}

// sameFileAt: the plan's entry i, a name in the directory open as fd, is
// the entry's file, by stat data or else by content.
func (p *statPlan) sameFileAt(fd, i int, stamp time.Time) bool {
	e, name := &p.entries[i], p.base[i]
	var st unix.Stat_t
	if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	link := e.mode&^0o777 == 0o120000
	switch {
	case link && st.Mode&unix.S_IFMT != unix.S_IFLNK:
		return false
	case !link && (st.Mode&unix.S_IFMT != unix.S_IFREG || (st.Mode&0o100 != 0) != (e.mode&0o100 != 0)):
		return false
	}
	if e.size != 0 && (uint32(st.Size) != e.size ||
		uint32(st.Ctim.Sec) != e.ctimeS || uint32(st.Ctim.Nsec) != e.ctimeN ||
		uint32(st.Mtim.Sec) != e.mtimeS || uint32(st.Mtim.Nsec) != e.mtimeN ||
		uint32(st.Ino) != e.ino || st.Uid != e.uid || st.Gid != e.gid) {
		return false
	}
	if e.size != 0 && !e.racy(stamp) {
		return true
	}
	// Racily clean, smudged or empty: by content, as git does.
	data, ok := contentAt(fd, name, link, st.Size)
	if !ok {
		return false
	}
	h := p.newHash()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return string(h.Sum(nil)) == string(e.oid)
}

// contentAt is a symlink's target or a regular file's bytes, name in the
// directory open as fd (size: its lstat's, a hint).
func contentAt(fd int, name string, link bool, size int64) ([]byte, bool) {
	if link {
		buf := make([]byte, max(size+1, 256))
		for {
			n, err := unix.Readlinkat(fd, name, buf)
			if err != nil {
				return nil, false
			}
			if n < len(buf) {
				return buf[:n], true
			}
			if len(buf) >= 1<<16 {
				return nil, false
			}
			buf = make([]byte, 2*len(buf))
		}
	}
	f, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	file := os.NewFile(uintptr(f), name)
	defer file.Close()
	var st unix.Stat_t
	if unix.Fstat(f, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false
	}
	data, err := io.ReadAll(file)
	return data, err == nil
}
