package codesnap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The capture index: what the submitter's last `add -A` on a work tree
// wrote, kept so that the next capture hashes only the files that changed
// since (issue 26: 11,000 modified and untracked files, 43 MiB, hashed on
// every capture otherwise). It is a cache of facts "the file at this path,
// with this stat data, hashed to this blob": it never decides what is in
// the tree. Each capture starts from a fresh copy of the user's index, and
// the untracked files git lists now (ignore rules as they are now); an
// entry of the capture index replaces the user's entry for the same path
// only where it saw a later state of the file (a later ctime) in the same
// mode, and is added for an untracked file of that path. `add -A`
// then checks every entry's stat data against the file and hashes what
// differs, as it does from the user's index.
//
// It is sound only while the hashing is what it was: it is kept with a
// key of the git version, the configuration add reads (core.*, filter.*,
// add.*, index.*, extensions.*), and every attributes file that could
// apply (the tree's .gitattributes in each directory holding a file add
// reads, info/attributes, the user's and the system's); any difference
// and the capture starts from the user's index alone (and writes a new
// capture index). An entry racily clean against the capture index's own
// stamp (its file's mtime or ctime in the second the index was written,
// or later) is never taken: a change of the same size in that second
// would leave its stat data as it was. An entry of the user's index
// racily clean against that index's time is smudged, as git would see it.
//
// It lives in the user's state directory for the checkout
// (taskdir.CheckoutState(commonDir)/capture/, hidden from every child),
// one file per work tree (named by its resolved path, which the file
// names again), written tmp+rename, read beneath that directory with no
// link followed, bounded, its index checksum verified.

const (
	captureMagic = "brood capture index 1\n"
	// captureMax bounds the capture index read or kept.
	captureMax = 64 << 20
)

// capturePath is where the capture index of the work tree top of the
// repository whose common git dir is common lives (statefile.go):
// H/capture/FILE under home; "" without a home.
func capturePath(common, top string) (home, rel string) {
	return stateFile(common, "capture", workTreeName(top, 16))
}

// captureIndex is a loaded capture index: git's index bytes and the time
// git wrote them.
type captureIndex struct {
	index []byte
	stamp time.Time
}

// loadCapture reads the capture index at rel under home for top under key; nil
// when there is none, or it is not one for top and key, or is damaged.
func loadCapture(home, rel, top, key, format string) *captureIndex {
	data, err := readStateFile(home, rel, captureMax+4096)
	if err != nil {
		return nil
	}
	rest, ok := bytes.CutPrefix(data, []byte(captureMagic))
	if !ok {
		return nil
	}
	var fields [3]string
	for i := range fields {
		line, after, ok := bytes.Cut(rest, []byte{'\n'})
		if !ok {
			return nil
		}
		fields[i], rest = string(line), after
	}
	ns, err := strconv.ParseInt(fields[2], 10, 64)
	if fields[0] != top || fields[1] != key || err != nil {
		return nil
	}
	oidLen, newHash := objectHash(format)
	if len(rest) < 12+oidLen {
		return nil
	}
	h := newHash()
	h.Write(rest[:len(rest)-oidLen])
	if !bytes.Equal(h.Sum(nil), rest[len(rest)-oidLen:]) {
		return nil
	}
	return &captureIndex{index: rest, stamp: time.Unix(0, ns)}
}

// saveCapture keeps index (written by git at stamp) as the capture index
// at rel under home for top under key (writeStateFile).
func saveCapture(home, rel, top, key string, index []byte, stamp time.Time) error {
	if len(index) > captureMax || strings.ContainsRune(top, '\n') {
		return nil
	}
	head := fmt.Sprintf("%s%s\n%s\n%d\n", captureMagic, top, key, stamp.UnixNano())
	if err := writeStateFile(home, rel, append([]byte(head), index...)); err != nil {
		return fmt.Errorf("codesnap: keep the capture index: %w", err)
	}
	return nil
}

// captureStart is the index a capture's add starts from: the user's
// index (written at userStamp) with the capture index's entries taken
// in place of its own where they saw a later state of the file in the
// same mode (see above), and added for the
// untracked files listed; ok false when either index is in a form this
// does not read (then add starts from the user's index).
func captureStart(user []byte, userStamp time.Time, prev *captureIndex, untracked []string, format string) (out []byte, ok bool) {
	oidLen, newHash := objectHash(format)
	if !plainIndex(user, oidLen) || !plainIndex(prev.index, oidLen) {
		return nil, false
	}
	us, ok := parseIndex(user, oidLen)
	if !ok {
		return nil, false
	}
	ps, ok := parseIndex(prev.index, oidLen)
	if !ok {
		return nil, false
	}
	taken := make(map[string]*indexEntry, len(ps))
	for i := range ps {
		e := &ps[i]
		if (e.mode&^0o777 == 0o100000 || e.mode&^0o777 == 0o120000) && e.size != 0 && !settling(e, prev.stamp) {
			taken[e.path] = e
		}
	}
	type raw struct {
		path string
		b    []byte
	}
	entries := make([]raw, 0, len(us)+len(untracked))
	tracked := make(map[string]bool, len(us))
	dirs := map[string]bool{}
	for i := range us {
		e := &us[i]
		tracked[e.path] = true
		for d := path.Dir(e.path); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
		b := bytes.Clone(entryBytes(user, e, oidLen))
		if p := taken[e.path]; p != nil && p.mode == e.mode && later(p, e) {
			b = entryBytes(prev.index, p, oidLen)
		} else if e.size != 0 && !e.gitlink() && settling(e, userStamp) {
			binary.BigEndian.PutUint32(b[36:], 0) // smudged, as git wrote it
		}
		entries = append(entries, raw{e.path, b})
	}
	for _, u := range untracked {
		p := taken[u]
		if p == nil || tracked[u] || dirs[u] || underFile(u, tracked) {
			continue
		}
		entries = append(entries, raw{u, entryBytes(prev.index, p, oidLen)})
	}
	slices.SortFunc(entries, func(a, b raw) int { return strings.Compare(a.path, b.path) })
	out = make([]byte, 12, len(user)+len(prev.index))
	copy(out, "DIRC")
	binary.BigEndian.PutUint32(out[4:], 2)
	binary.BigEndian.PutUint32(out[8:], uint32(len(entries)))
	for i, e := range entries {
		if i > 0 && entries[i-1].path == e.path {
			return nil, false
		}
		out = append(out, e.b...)
	}
	h := newHash()
	h.Write(out)
	return h.Sum(out), true
}

// settling: the entry's file was modified or changed (ctime, which no
// unprivileged writer sets back) in the second its index was written at
// stamp, or later: git's racily clean entry, to the second (a git built
// without nanosecond stat data compares whole seconds).
func settling(e *indexEntry, stamp time.Time) bool {
	s := uint32(stamp.Unix())
	return e.mtimeS >= s || e.ctimeS >= s
}

// later: p's stat data is of a later change of the file than e's.
func later(p, e *indexEntry) bool {
	return p.ctimeS > e.ctimeS || p.ctimeS == e.ctimeS && p.ctimeN > e.ctimeN
}

// underFile: a directory above path u is a tracked file.
func underFile(u string, tracked map[string]bool) bool {
	for d := path.Dir(u); d != "."; d = path.Dir(d) {
		if tracked[d] {
			return true
		}
	}
	return false
}

// entryBytes is e's whole entry in index, padding included.
func entryBytes(index []byte, e *indexEntry, oidLen int) []byte {
	return index[e.at : e.at+(40+oidLen+2+len(e.path)+8)&^7]
}

// plainIndex: index has no extension git requires to read it (a split
// index's link, a sparse index's sdir: their signatures start with a
// lowercase letter); optional ones (TREE, UNTR, ...) are left out of the
// start index, which write-tree and status rebuild.
func plainIndex(index []byte, oidLen int) bool {
	entries, ok := parseIndex(index, oidLen)
	if !ok {
		return false
	}
	off := 12
	if n := len(entries); n > 0 {
		off = entries[n-1].at + (40+oidLen+2+len(entries[n-1].path)+8)&^7
	}
	end := len(index) - oidLen
	for off < end {
		if off+8 > end {
			return false
		}
		if c := index[off]; c < 'A' || c > 'Z' {
			return false
		}
		next := off + 8 + int(binary.BigEndian.Uint32(index[off+4:off+8]))
		if next > end || next <= off {
			return false
		}
		off = next
	}
	return off == end
}

// captureKey is what the hashing of a capture depends on besides the
// files: git's version, the configuration add reads and every
// attributes file that may apply to a file it reads (in each directory
// of paths and above, info/attributes, the user's, the system's).
func captureKey(ctx context.Context, g gitCmd, top, common string, paths []string, indexAttrs string) (string, error) {
	h := sha256.New()
	part := func(name string, b []byte) {
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	ver, err := g.run(ctx, "version")
	if err != nil {
		return "", err
	}
	part("version", []byte(ver))
	// (exit 1: no such key at all)
	conf, _ := g.run(ctx, "config", "-z", "--get-regexp", `^(core|filter|add|index|extensions|attr)\.`)
	part("config", []byte(conf))
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_ATTR_") {
			part("env", []byte(kv))
		}
	}
	// (git reads a directory's .gitattributes from the index where the
	// work tree has none)
	part("index attributes", []byte(indexAttrs))
	files := []string{filepath.Join(common, "info", "attributes"), "/etc/gitattributes"}
	if p, _ := g.line(ctx, "config", "--path", "--get", "core.attributesFile"); p != "" {
		files = append(files, p)
	} else if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		files = append(files, filepath.Join(x, "git", "attributes"))
	} else if home, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(home, ".config", "git", "attributes"))
	}
	for _, f := range files {
		b, ok := attrFile(f)
		if !ok {
			return "", fmt.Errorf("codesnap: %s is not a file brood reads", f)
		}
		part("file "+f, b)
	}
	dirs := map[string]bool{".": true}
	for _, p := range paths {
		for d := path.Dir(p); !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	names := slices.Sorted(maps.Keys(dirs))
	for _, d := range names {
		f := filepath.Join(top, filepath.FromSlash(d), ".gitattributes")
		b, ok := attrFile(f)
		if !ok {
			return "", fmt.Errorf("codesnap: %s is not a file brood reads", f)
		}
		part("tree "+d, b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// attrFile is an attributes file's content, a link's target (marked as
// one), or nothing where there is none; ok false for anything else (a
// directory, a FIFO, over 1 MiB): no key.
func attrFile(p string) (b []byte, ok bool) {
	info, err := os.Lstat(p)
	switch {
	case err != nil:
		return nil, errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOTDIR)
	case info.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(p)
		return []byte("link " + t), err == nil
	case !info.Mode().IsRegular() || info.Size() > 1<<20:
		return nil, false
	}
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err = io.ReadAll(io.LimitReader(f, 1<<20+1))
	return b, err == nil && len(b) <= 1<<20
}

// startFromCapture makes index (a link to the user's index, or its copy
// with its time) the start index of captureStart where the capture index
// kept at file holds for this work tree. It returns the key to keep the
// next one under ("" where none can be kept: an index in a form this does
// not read, an attributes file brood does not read) and the user's
// entries (keepCapture keeps none of them unhashed). (checkinArgs then
// probes the files whose stat data differs from the start index: a new
// dirty state, every file rewritten, is still streamed in bulk.)
func startFromCapture(ctx context.Context, g gitCmd, top, common, index, home, rel, format string) (key string, user map[string]string) {
	oidLen, newHash := objectHash(format)
	userIndex, err := os.ReadFile(index)
	var stamp time.Time
	switch {
	case errors.Is(err, os.ErrNotExist): // no index yet: an empty one
		userIndex = append([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00"), make([]byte, oidLen)...)
		h := newHash()
		h.Write(userIndex[:12])
		copy(userIndex[12:], h.Sum(nil))
	case err != nil:
		return "", nil
	default:
		info, err := os.Stat(index)
		if err != nil {
			return "", nil
		}
		stamp = info.ModTime()
	}
	if !plainIndex(userIndex, oidLen) {
		return "", nil
	}
	entries, _ := parseIndex(userIndex, oidLen)
	out, err := g.run(ctx, "-c", "core.fsmonitor=false", "ls-files", "-z", "-o", "--exclude-standard")
	if err != nil {
		return "", nil
	}
	var untracked []string
	paths := make([]string, 0, len(entries))
	user = make(map[string]string, len(entries))
	var attrs strings.Builder
	for i := range entries {
		e := &entries[i]
		paths = append(paths, e.path)
		user[e.path] = string(userIndex[e.at : e.at+40+oidLen])
		if path.Base(e.path) == ".gitattributes" {
			fmt.Fprintf(&attrs, "%s %x\n", e.path, e.oid)
		}
	}
	for p := range strings.SplitSeq(out, "\x00") {
		if p != "" && !strings.HasSuffix(p, "/") {
			untracked = append(untracked, p)
		}
	}
	key, err = captureKey(ctx, g, top, common, append(paths, untracked...), attrs.String())
	if err != nil {
		return "", nil
	}
	prev := loadCapture(home, rel, top, key, format)
	if prev == nil {
		return key, user
	}
	start, ok := captureStart(userIndex, stamp, prev, untracked, format)
	if !ok {
		return key, user
	}
	tmp := index + ".start"
	if err := os.WriteFile(tmp, start, 0o600); err != nil {
		return key, user
	}
	if err := os.Rename(tmp, index); err != nil {
		os.Remove(tmp)
		return key, user
	}
	return key, user
}

// keepCapture keeps index, what the capture's add and write-tree wrote,
// as the capture index at file for top under key, with none of the
// user's entries that add merely kept (stat data and blob id as the
// user's index had them: smudged, size 0, so never taken): it holds
// only what a capture hashed, and a lie once in the user's index is
// trusted only while it is there, as git trusts it. Its stamp is the
// earlier of the index's time and a probe's made after it in gitDir (the
// work tree's file system and clock, not the temporary directory's).
func keepCapture(home, rel, top, key, index, gitDir string, user map[string]string, format string) {
	info, err := os.Stat(index)
	if err != nil || info.Size() > captureMax {
		return
	}
	data, err := os.ReadFile(index)
	if err != nil {
		return
	}
	probe, err := os.CreateTemp(gitDir, "brood-capture-stamp-*")
	if err != nil {
		return
	}
	pinfo, err := probe.Stat()
	probe.Close()
	os.Remove(probe.Name())
	if err != nil {
		return
	}
	stamp := info.ModTime()
	if pinfo.ModTime().Before(stamp) {
		stamp = pinfo.ModTime()
	}
	oidLen, newHash := objectHash(format)
	entries, ok := parseIndex(data, oidLen)
	if !ok || len(data) < 12+oidLen {
		return
	}
	for i := range entries {
		e := &entries[i]
		if u, ok := user[e.path]; ok && u == string(data[e.at:e.at+40+oidLen]) {
			binary.BigEndian.PutUint32(data[e.at+36:], 0)
		}
	}
	h := newHash()
	h.Write(data[:len(data)-oidLen])
	copy(data[len(data)-oidLen:], h.Sum(nil))
	// (A capture index not kept costs the next capture its hashing.)
	_ = saveCapture(home, rel, top, key, data, stamp)
}
