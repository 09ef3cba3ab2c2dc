package codesnap

import (
	"bytes"
	"encoding/binary"
)

// childFromDonor is the child's index of a checkout derived from a donor
// on the same base commit (derive.go), made from the donor's child index
// without git: what `git read-tree -m ROOT BASE` on the new verified index
// writes (childIndex), entry for entry. The child's index holds the base
// commit's tree, which the donor's holds too: each entry keeps its path,
// mode and blob id, and takes the stat data of the new verified index's
// entry where that is the same path, mode and blob (the file is the
// base's), else none (zeros: git hashes it, and sees it modified or
// gone), as read-tree does for an entry whose blob it takes from BASE.
// ok is false for an index the stat check does not read, or entries the
// two do not list in git's order; the caller then runs git.
func childFromDonor(donorChild, verified []byte, format string) (out []byte, ok bool) {
	oidLen, newHash := objectHash(format)
	kids, ok := parseIndex(donorChild, oidLen)
	if !ok || len(donorChild) < 12+oidLen {
		return nil, false
	}
	ver, ok := parseIndex(verified, oidLen)
	if !ok {
		return nil, false
	}
	out = bytes.Clone(donorChild)
	j := 0
	for i := range kids {
		k := &kids[i]
		if i > 0 && kids[i-1].path >= k.path {
			return nil, false
		}
		for j < len(ver) && ver[j].path < k.path {
			j++
		}
		// An entry's stat data is its first 40 bytes: ctime, mtime, dev,
		// ino, mode, uid, gid, size (mode the same on both sides here).
		stat := out[k.at : k.at+40]
		if j < len(ver) && ver[j].path == k.path && ver[j].mode == k.mode && bytes.Equal(ver[j].oid, k.oid) {
			copy(stat, verified[ver[j].at:ver[j].at+40])
			continue
		}
		clear(stat[:24]) // ctime, mtime, dev, ino
		clear(stat[28:]) // uid, gid, size
		binary.BigEndian.PutUint32(stat[24:], k.mode)
	}
	body, sum := out[:len(out)-oidLen], out[len(out)-oidLen:]
	if !bytes.Equal(sum, make([]byte, oidLen)) { // (index.skipHash: no checksum)
		h := newHash()
		h.Write(body)
		copy(sum, h.Sum(nil))
	}
	return out, true
}
