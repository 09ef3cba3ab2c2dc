package codesnap

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"time"
)

// The per-use check of a verified base checkout, in this process: one
// stat per file the verified index lists and one readdir per directory
// whose names may have changed (statplan.go), no git process. It answers only "provably the verified tree" (true) or
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
// directory that is not one (a symlink), a conflict stage, assume-valid
// or an index version other than 2 or 3 answers false. A gitlink (a
// submodule, or a repository nested in the submitter's tree) is checked
// out as git checks one out that is not initialised: an empty directory,
// which the check requires empty.

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

// gitlink: the entry is a submodule's commit, not a file.
func (e *indexEntry) gitlink() bool { return e.mode&^0o777 == 0o160000 }

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
		case 0o160000: // a gitlink: checked out as an empty directory
		default:
			return nil, false
		}
		entries = append(entries, ie)
	}
	return entries, true
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
		if e := &entries[i]; e.size != 0 && !e.gitlink() && e.racy(stamp) {
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

// emptyGitlinks: every gitlink of the verified index is an empty
// directory in the checkout at tree (git checks out an uninitialised
// submodule so). git's own check (clean) never looks inside a gitlink's
// directory, so a file planted there would pass it.
func emptyGitlinks(tree string, index []byte, format string) error {
	oidLen, _ := objectHash(format)
	entries, ok := parseIndex(index, oidLen)
	if !ok {
		return fmt.Errorf("codesnap: the verified index of %s is in a form brood does not read", tree)
	}
	for i := range entries {
		if !entries[i].gitlink() {
			continue
		}
		p := filepath.Join(tree, filepath.FromSlash(entries[i].path))
		if st, err := os.Lstat(p); err != nil || !st.IsDir() {
			return fmt.Errorf("%w: submodule directory %s is not a directory", errPoisoned, clip(entries[i].path))
		}
		if names, err := os.ReadDir(p); err != nil || len(names) > 0 {
			return fmt.Errorf("%w: submodule directory %s is not empty", errPoisoned, clip(entries[i].path))
		}
	}
	return nil
}
