package codesnap

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The per-use check of a verified base checkout, in this process: one
// lstat per file the verified index lists and one readdir per directory,
// no git process. It answers only "provably the verified tree" (true) or
// "cannot tell" (false): on false, the caller runs git's own check
// (clean), which decides, so this check may only be stricter than git's.
//
// It is git's stat check (ie_match_stat with core.trustctime and
// core.checkStat=default), done strictly: mode type and executable bit,
// size, mtime and ctime to the nanosecond, inode, uid and gid. Writing a
// file changes its ctime, which no unprivileged writer can set back. An
// entry git smudged when it wrote the index (racily clean: its stat data
// too close to the index's own time to trust; size 0), or racily clean
// now (changed no earlier than the index was written), is hashed here, as
// git hashes it, and compared with the index's blob id. Any file or directory the index
// does not imply (besides the top .git, which checkBaseGitDir checks), a
// directory that is not one (a symlink), a conflict stage, a gitlink,
// assume-valid or an index version other than 2 or 3 answers false.

// indexEntry is the part of a git index entry the check compares.
type indexEntry struct {
	path                           string
	ctimeS, ctimeN, mtimeS, mtimeN uint32
	ino, mode, uid, gid, size      uint32
	oid                            []byte
	at                             int // where the entry starts in the index
}

// racy: the entry's file changed no earlier than the index was written,
// so a later write in the same clock tick would leave its stat data as it
// is (git's racy-git problem); git hashes such an entry, and so does this.
func (e *indexEntry) racy(stamp time.Time) bool {
	s, n := uint32(stamp.Unix()), uint32(stamp.Nanosecond())
	late := func(sec, nsec uint32) bool { return sec > s || sec == s && nsec >= n }
	return late(e.mtimeS, e.mtimeN) || late(e.ctimeS, e.ctimeN)
}

// parseIndex reads a version 2 or 3 git index; ok is false for anything
// the check does not handle.
func parseIndex(b []byte, oidLen int) (entries []indexEntry, ok bool) {
	if len(b) < 12 || string(b[:4]) != "DIRC" {
		return nil, false
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version != 2 && version != 3 {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(b[8:12]))
	off := 12
	entries = make([]indexEntry, 0, n)
	for range n {
		fixed := 40 + oidLen + 2
		if off+fixed > len(b) {
			return nil, false
		}
		e := b[off:]
		u := func(i int) uint32 { return binary.BigEndian.Uint32(e[i*4:]) }
		ie := indexEntry{ctimeS: u(0), ctimeN: u(1), mtimeS: u(2), mtimeN: u(3), ino: u(5), mode: u(6), uid: u(7), gid: u(8), size: u(9),
			oid: e[40 : 40+oidLen], at: off}
		flags := binary.BigEndian.Uint16(e[40+oidLen:])
		if flags&0xf000 != 0 { // assume-valid, extended flags, a conflict stage
			return nil, false
		}
		nameLen := int(flags & 0xfff)
		start := off + fixed
		if nameLen == 0xfff || start+nameLen > len(b) {
			return nil, false
		}
		ie.path = string(b[start : start+nameLen])
		// Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
		off += (fixed + nameLen + 8) &^ 7
		if off > len(b) || ie.path == "" {
			return nil, false
		}
		switch ie.mode &^ 0o777 {
		case 0o100000, 0o120000:
		default: // a gitlink, or anything else
			return nil, false
		}
		entries = append(entries, ie)
	}
	return entries, true
}

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
}

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
		dir, name := path.Split(entries[i].path)
		d := 0
		if dir != "" {
			d = dirOf(strings.TrimSuffix(dir, "/"))
		}
		p.base[i] = name
		p.dirs[d].files = append(p.dirs[d].files, i)
		p.dirs[d].names++
	}
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
// directory swapped for a link fails), holds exactly as many names as
// the index implies, and each of them is there as the index says (the
// count and the presence of every expected name make the sets equal).
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
	return p.cleanDir(fd, 0, stamp, make([]byte, 32<<10))
}

// cleanDir checks the plan's directory d, open as fd (buf: getdents').
func (p *statPlan) cleanDir(fd, d int, stamp time.Time, buf []byte) bool {
	dir := &p.dirs[d]
	if n, ok := countNames(fd, buf); !ok || n != dir.names {
		return false
	}
	for _, i := range dir.files {
		if !p.sameFileAt(fd, i, stamp) {
			return false
		}
	}
	for _, k := range dir.kids {
		kid, err := unix.Openat(fd, p.dirs[k].name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		ok := p.cleanDir(kid, k, stamp, buf)
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

// smudgeRacy returns a copy of a verified index (written at stamp) with
// every entry that is racily clean against stamp smudged as git smudges
// one (its size zeroed: checked by content whenever it is checked), and
// the index's checksum made anew. An index derived from it later
// (derive.go) has a later stamp, against which such an entry's stat data
// would look settled: only a content check could vouch for it. ok is
// false for an index the check does not handle.
func smudgeRacy(index []byte, stamp time.Time, format string) (out []byte, ok bool) {
	oidLen, newHash := objectHash(format)
	entries, ok := parseIndex(index, oidLen)
	if !ok || len(index) < 12+oidLen {
		return nil, false
	}
	out = bytes.Clone(index)
	smudged := false
	for i := range entries {
		if e := &entries[i]; e.size != 0 && e.racy(stamp) {
			binary.BigEndian.PutUint32(out[e.at+36:], 0)
			smudged = true
		}
	}
	body, sum := out[:len(out)-oidLen], out[len(out)-oidLen:]
	if !smudged || bytes.Equal(sum, make([]byte, oidLen)) { // (index.skipHash: no checksum)
		return out, true
	}
	h := newHash()
	h.Write(body)
	copy(sum, h.Sum(nil))
	return out, true
}

// objectHash is the length of a git object id and its hash in a
// repository of this object format (sha1 unless it says sha256).
func objectHash(format string) (oidLen int, newHash func() hash.Hash) {
	if format == "sha256" {
		return 32, sha256.New
	}
	return 20, sha1.New
}
