package codesnap

import (
	"crypto/sha1"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// KeptStamps is how many of the directories of snap's verified checkout
// in c have a stamp kept (statplan.go), and how many it has.
func KeptStamps(c *Cache, snap *Snapshot) (kept, dirs int) {
	v, ok := c.verified.Load(lowerKey(snap))
	if !ok || v.(*lower).plan == nil {
		return 0, 0
	}
	p := v.(*lower).plan
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.read {
		if s != (dirStamp{}) {
			kept++
		}
	}
	return kept, len(p.read)
}

// Guarded reports whether snap's verified checkout in c has a quiet guard
// (guard.go): its next use checks no file.
func Guarded(c *Cache, snap *Snapshot) bool {
	v, ok := c.verified.Load(lowerKey(snap))
	if !ok {
		return false
	}
	l := v.(*lower)
	l.gmu.Lock()
	defer l.gmu.Unlock()
	return l.guard.quiet()
}

// CaptureIndexFile is where Capture keeps the capture index of the work
// tree top of the repository whose common git dir is common.
func CaptureIndexFile(common, top string) string {
	home, rel := capturePath(common, top)
	return filepath.Join(home, filepath.FromSlash(rel))
}

// EditCaptureIndex rewrites the capture index at file: its work tree
// (top: "" keeps it), its stamp (zero keeps it), and the blob id of the
// entry for path (nil keeps them), its checksum made anew.
func EditCaptureIndex(file, top string, stamp time.Time, path string, oid []byte) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	rest := strings.TrimPrefix(string(data), captureMagic)
	f := strings.SplitN(rest, "\n", 4)
	if len(f) != 4 {
		return errors.New("not a capture index")
	}
	if top != "" {
		f[0] = top
	}
	if !stamp.IsZero() {
		f[2] = strconv.FormatInt(stamp.UnixNano(), 10)
	}
	index := []byte(f[3])
	if oid != nil {
		entries, ok := parseIndex(index, len(oid))
		if !ok {
			return errors.New("capture index not read")
		}
		for _, e := range entries {
			if e.path == path {
				copy(index[e.at+40:], oid)
			}
		}
		body := index[:len(index)-len(oid)]
		sum := sha1.Sum(body)
		copy(index[len(body):], sum[:])
	}
	out := captureMagic + strings.Join(f[:3], "\n") + "\n" + string(index)
	return os.WriteFile(file, []byte(out), 0o600)
}
