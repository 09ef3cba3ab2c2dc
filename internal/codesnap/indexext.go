package codesnap

import (
	"bytes"
	"encoding/binary"
)

// withoutCacheTree is a verified index without its cached tree ids (the
// TREE extension). A single-tree read-tree fills them from the ids the
// parent trees name, and write-tree then takes a subtree's id from there
// without hashing its entries: a tree object tampered in the worker's
// clone (its entries changed, its name kept) would give back the
// submitter's tree id over other files. Without it, write-tree hashes
// every tree from the index's entries, which the verification checked
// against the files, so the copy's tree is checked against the
// submitter's for real (buildOverlay). ok is false for an index form the
// check does not read (then nothing verified is kept).
func withoutCacheTree(index []byte, format string) (out []byte, ok bool) {
	oidLen, newHash := objectHash(format)
	entries, ok := parseIndex(index, oidLen)
	if !ok || len(index) < 12+oidLen {
		return nil, false
	}
	end := 12
	if n := len(entries); n > 0 {
		last := entries[n-1]
		end = last.at + (40+oidLen+2+len(last.path)+8)&^7
	}
	body, sum := index[:len(index)-oidLen], index[len(index)-oidLen:]
	if end > len(body) {
		return nil, false
	}
	out = append(make([]byte, 0, len(index)), body[:end]...)
	dropped := false
	for off := end; off < len(body); {
		if off+8 > len(body) {
			return nil, false
		}
		size := int(binary.BigEndian.Uint32(body[off+4 : off+8]))
		next := off + 8 + size
		if size < 0 || next > len(body) || next < off {
			return nil, false
		}
		if string(body[off:off+4]) == "TREE" {
			dropped = true
		} else {
			out = append(out, body[off:next]...)
		}
		off = next
	}
	if !dropped {
		return bytes.Clone(index), true
	}
	if bytes.Equal(sum, make([]byte, oidLen)) { // (index.skipHash: no checksum)
		return append(out, sum...), true
	}
	h := newHash()
	h.Write(out)
	return h.Sum(out), true
}
