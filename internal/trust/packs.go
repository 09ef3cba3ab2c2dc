package trust

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Packs is what a repository's pack directory held before a child that
// writes the work tree in place ran. objects/pack is writable to such a
// child (a commit or a gc writes packs), so it could rewrite a pack or
// its index in place (`chmod u+w`) with another content under an
// object's name, or add a pack of its own whose index maps a committed
// object's name to another content (git reads the newest pack first and
// re-hashes nothing it reads): the user's `git diff` would compare the
// file with what the child chose.
type Packs struct {
	dir   string
	files map[string]packStamp // name in objects/pack -> its stamp
}

// packStamp is one checksummed file of objects/pack: its identity and
// its trailer (the last bytes: the hash of what precedes them).
type packStamp struct {
	ino, size, ctime int64
	trailer          []byte
}

// isPackFile reports whether name is a file of objects/pack that ends in
// the checksum of its content (a pack, its index, reverse index, bitmap
// or mtimes, a multi-pack index), whatever its name: git reads every
// *.idx there, not only pack-<hash>.idx (review18 R2: evil.idx named a
// committed blob's id for other content and went unlooked at).
func isPackFile(name string) bool {
	if name == "multi-pack-index" {
		return true
	}
	return slices.Contains([]string{".pack", ".idx", ".rev", ".bitmap", ".mtimes"}, filepath.Ext(name))
}

// Accelerators are the pack files git does without (it reads the packs
// through their indexes): a changed or new one is removed.
func isAccelerator(name string) bool {
	return name == "multi-pack-index" || filepath.Ext(name) == ".rev" || filepath.Ext(name) == ".bitmap"
}

// SnapshotPacks records the checksummed files under common/objects/pack:
// one stat and one 32-byte read each.
func SnapshotPacks(common string) *Packs {
	p := &Packs{dir: filepath.Join(common, "objects", "pack"), files: map[string]packStamp{}}
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return p
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !isPackFile(e.Name()) {
			continue
		}
		if st, ok := stampPack(filepath.Join(p.dir, e.Name())); ok {
			p.files[e.Name()] = st
		}
	}
	return p
}

// PackChanges are what Packs.Check finds.
type PackChanges struct {
	Changed []string // a file there before with another content now (objects/pack/...)
	Removed []string // those of Changed removed (accelerators)
	New     []string // packs' indexes made since (objects/pack/...idx), for the caller to verify
}

// Check compares the pack directory with the snapshot: a file there
// before whose stamp moved is read and hashed, and is changed unless its
// content still hashes to the trailer it had (git freshens a pack's times
// when it writes an object the pack holds); a changed accelerator, and
// one made since (a multi-pack index maps names to packs), is removed. A file gone is not a change (a
// gc removes packs).
func (p *Packs) Check() PackChanges {
	var c PackChanges
	if p == nil {
		return c
	}
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return c
	}
	for _, e := range ents {
		name := e.Name()
		if !isPackFile(name) {
			continue
		}
		abs := filepath.Join(p.dir, name)
		was, ok := p.files[name]
		switch {
		case !ok && isAccelerator(name):
			os.Remove(abs) // git does without it, and rebuilds it
			continue
		case !ok:
			if filepath.Ext(name) == ".idx" {
				c.New = append(c.New, "objects/pack/"+name)
			}
			continue
		}
		if now, ok := stampPack(abs); ok && now.ino == was.ino && now.size == was.size && now.ctime == was.ctime {
			continue
		}
		if hashesTo(abs, was.trailer) {
			continue
		}
		c.Changed = append(c.Changed, "objects/pack/"+name)
		if isAccelerator(name) && os.Remove(abs) == nil {
			c.Removed = append(c.Removed, "objects/pack/"+name)
		}
	}
	return c
}

// hashesTo reports whether the file at path is content followed by its
// SHA-1 or SHA-256, that hash being the end of trailer (the 32 bytes the
// file ended with before).
func hashesTo(path string, trailer []byte) bool {
	for _, h := range []struct {
		new func() hash.Hash
		n   int
	}{{sha1.New, sha1.Size}, {sha256.New, sha256.Size}} {
		if len(trailer) < h.n {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		fi, err := f.Stat()
		if err != nil || fi.Size() < int64(h.n) {
			f.Close()
			return false
		}
		sum := h.new()
		_, err = io.Copy(sum, io.LimitReader(f, fi.Size()-int64(h.n)))
		tail := make([]byte, h.n)
		if err == nil {
			_, err = io.ReadFull(f, tail)
		}
		f.Close()
		want := trailer[len(trailer)-h.n:]
		if err == nil && bytes.Equal(sum.Sum(nil), want) && bytes.Equal(tail, want) {
			return true
		}
	}
	return false
}
