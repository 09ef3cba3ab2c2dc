package isolate

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// racyWindow is how close to the moment it was stamped a file's
// modification time may be before its stamp is not believed: a write
// within the same clock tick leaves mtime and size as they were (git's
// "racy" entries). Such a snapshot is always re-taken at finish. (ctime is
// compared, not windowed: a write that restores an old mtime still moves
// ctime, and at worst a missed move loses the Base moved line, never the
// patch, which git apply checks against the tree as it is.)
const racyWindow = time.Second

// stamp is what lstat tells of a file: equal stamps, taken far enough
// apart from the file's last change, mean an unchanged file.
type stamp struct {
	dev, ino, size uint64
	mode           uint32
	mtime, ctime   int64
	missing        bool
}

func lstamp(path string) stamp {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return stamp{missing: true}
	}
	return stamp{dev: uint64(st.Dev), ino: st.Ino, size: uint64(st.Size), mode: uint32(st.Mode),
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// treePrint is everything a snapshot's tree is made of besides the
// contents of clean tracked files (which git status checks itself): the
// index file, the status walk's records, and every listed path's stamp.
// Two equal prints give the same tree, so the finish can tell that the
// parent's tree did not move beneath a child without writing a second
// tree (an update-index over a full copy of the index, a write-tree and a
// diff-tree: a cost that follows the index's size).
type treePrint struct {
	index   stamp
	records string
	paths   map[string]stamp
	racy    bool // a path changed too close to its stamp
}

// printTree stamps the index and the paths of st (and also) now.
func printTree(r *repo, st treeStatus, also []string) *treePrint {
	p := &treePrint{index: lstamp(filepath.Join(r.gitDir, "index")), records: st.records, paths: map[string]stamp{}}
	edge := time.Now().Add(-racyWindow).UnixNano()
	for _, rel := range slices.Concat(st.changed, also) {
		s := lstamp(filepath.Join(r.top, rel))
		p.paths[rel] = s
		// A directory (a nested repository's gitlink) can change what it
		// stands for without a stamp of its own changing.
		if !s.missing && (s.mtime >= edge || s.mode&unix.S_IFMT == unix.S_IFDIR) {
			p.racy = true
		}
	}
	return p
}

// same reports whether the tree printed as q is surely the tree printed as
// p (p the earlier, spawn-time print).
func (p *treePrint) same(q *treePrint) bool {
	// The index's ctime is not compared: our own hard link of it (the
	// private index) moves it. git replaces the index by rename, so a new
	// index is a new inode.
	if p == nil || q == nil || p.racy {
		return false
	}
	pi, qi := p.index, q.index
	pi.ctime, qi.ctime = 0, 0
	if pi != qi || p.records != q.records {
		return false
	}
	for rel, s := range q.paths {
		if was, ok := p.paths[rel]; !ok || was != s {
			return false
		}
	}
	return len(p.paths) == len(q.paths)
}

// statusRecords joins the records of a status walk that make the tree
// (ignored entries left out), in git's order.
func statusRecords(recs []string) string {
	var b strings.Builder
	for _, r := range recs {
		if !strings.HasPrefix(r, "!!") {
			b.WriteString(r)
			b.WriteByte(0)
		}
	}
	return b.String()
}

// stampsHold reports whether the index and every path p stamped are as
// they were (no walk: what a quiet treeWatch leaves to check).
func (p *treePrint) stampsHold(r *repo) bool {
	if p == nil {
		return false
	}
	q := &treePrint{index: lstamp(filepath.Join(r.gitDir, "index")), records: p.records, paths: map[string]stamp{}}
	for rel := range p.paths {
		q.paths[rel] = lstamp(filepath.Join(r.top, rel))
	}
	return p.same(q)
}
