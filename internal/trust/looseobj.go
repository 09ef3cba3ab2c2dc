package trust

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// LooseObjects is what a repository's loose objects were before a child
// that writes the work tree in place ran: their names, and when. The
// directories under objects/ are writable to such a child (a commit adds
// objects), so it can unlink an object (0444) and write another content
// under its name, or `chmod u+w` it and write it in place (its fan-out
// directory's ctime does not move then): the user's `git diff` would
// compare the file with what the child chose. Replaced finds those.
type LooseObjects struct {
	dir   string // the common git dir's objects/
	label string // how Replaced names dir: "objects/", or a nested one's path
	since time.Time
	names map[string][]string // fan-out directory -> its objects' names
	// nested are the nested repositories' (WithNested); unchecked are
	// those of them beyond MaxNestedStores.
	nested    []*LooseObjects
	unchecked []string
}

// SnapshotLooseObjects records the loose objects under common/objects. It
// lists the 256 fan-out directories; it stats no object.
func SnapshotLooseObjects(common string) *LooseObjects {
	// A file's ctime comes from the kernel's coarse clock: a second's
	// slack takes in every object made from here on.
	return snapshotLoose(filepath.Join(common, "objects"), "objects/")
}

// snapshotLoose is SnapshotLooseObjects of the object directory dir,
// named label in what Replaced returns.
func snapshotLoose(dir, label string) *LooseObjects {
	l := &LooseObjects{dir: dir, label: label, since: time.Now().Add(-time.Second), names: map[string][]string{}}
	fans, err := os.ReadDir(l.dir)
	if err != nil {
		return l
	}
	for _, f := range fans {
		if len(f.Name()) != 2 || !f.IsDir() {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(l.dir, f.Name()))
		if err != nil {
			continue
		}
		for _, e := range ents {
			l.names[f.Name()] = append(l.names[f.Name()], e.Name())
		}
	}
	return l
}

// Replaced removes and returns (as paths under objects/) the loose objects
// that were there before and were written again since with a content that
// does not hash to their name: the user's git then reads the object from
// a pack, or says it is missing, instead of reading what the child chose.
// Each object is stat'ed (one fstatat: at 10,000 objects some 10 ms); one
// whose ctime moved is inflated and hashed, and one written again with its
// own content (git freshens one it finds loose) is left.
func (l *LooseObjects) Replaced() []string {
	if l == nil {
		return nil
	}
	var out []string
	for fan, names := range l.names {
		for _, name := range changedSince(filepath.Join(l.dir, fan), names, l.since.UnixNano()) {
			p := filepath.Join(l.dir, fan, name)
			if objectMatches(p, fan+"/"+name) {
				continue
			}
			if os.Remove(p) == nil {
				out = append(out, l.label+fan+"/"+name)
			}
		}
	}
	for _, n := range l.nested {
		out = append(out, n.Replaced()...)
	}
	slices.Sort(out)
	return out
}

// MaxNestedStores bounds the nested repositories whose loose objects
// WithNested records (each costs the listing of its 256 fan-out
// directories before the run and a stat of each object after it).
const MaxNestedStores = 64

// WithNested is l (a new one when l is nil) with the loose objects of the
// nested repositories recorded too: gitDirs are their .git directories,
// slash-separated paths relative to top (trust.Nested.GitDirs). An
// in-place writer writes those as it writes the rest of the tree, so it
// could rewrite an object the user's git in that repository reads as
// committed. Those beyond MaxNestedStores are Unchecked.
func (l *LooseObjects) WithNested(top string, gitDirs []string) *LooseObjects {
	if l == nil {
		l = &LooseObjects{names: map[string][]string{}}
	}
	for i, rel := range gitDirs {
		if i >= MaxNestedStores {
			l.unchecked = append(l.unchecked, gitDirs[i:]...)
			break
		}
		dir := filepath.Join(top, filepath.FromSlash(rel), "objects")
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue // none, or a link: not this repository's own store
		}
		l.nested = append(l.nested, snapshotLoose(dir, rel+"/objects/"))
	}
	return l
}

// Unchecked are the nested repositories' .git directories (relative to
// the top) whose loose objects Replaced does not check: beyond
// MaxNestedStores.
func (l *LooseObjects) Unchecked() []string {
	if l == nil {
		return nil
	}
	return l.unchecked
}

// maxObjectCheck bounds what objectMatches inflates (an object larger is
// taken for not matching: a replaced object is removed, never trusted).
const maxObjectCheck = 256 << 20

// objectMatches reports whether the loose object file at p inflates to
// content whose hash (SHA-1, or SHA-256 for a 64-digit name) is name.
func objectMatches(p, name string) bool {
	want, err := hex.DecodeString(filepath.Dir(name) + filepath.Base(name))
	if err != nil {
		return false
	}
	var h hash.Hash
	switch len(want) {
	case sha1.Size:
		h = sha1.New()
	case sha256.Size:
		h = sha256.New()
	default:
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	z, err := zlib.NewReader(f)
	if err != nil {
		return false
	}
	n, err := io.Copy(h, io.LimitReader(z, maxObjectCheck+1))
	if err != nil || n > maxObjectCheck {
		return false
	}
	return bytes.Equal(h.Sum(nil), want)
}
