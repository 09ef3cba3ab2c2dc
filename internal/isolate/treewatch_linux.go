package isolate

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/dirents"
)

// watchMask is every event that changes a directory's entries or a file's
// content or metadata.
const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// treeWatch is an inotify watch on every directory of the parent's work
// tree but those its last walk found ignored (watchCache), set before an
// isolated writer's spawn walk and read at its finish: when it saw nothing
// outside the ignored entries, and git's exclude sources, the index and
// the dirty paths' stamps are as they were, the tree is the spawn's and
// the finish takes no second walk (baseMoved). It answers only whether the
// parent's tree moved beneath the child (the user's edits, another
// task's), which the child cannot write; a writer in place is judged by
// walks, never by it (a write through mmap or a hard link elsewhere
// raises no event). Any doubt makes the finish walk: a nested repository
// (its HEAD moves unseen), an overflowed queue, a watch that failed, an
// ignored entry of the cache this walk does not find ignored.
type treeWatch struct {
	fd      int
	dirs    map[int32]string // watch descriptor -> directory, relative to the top
	skipped []string         // directories left unwatched (the cache's ignored)
	sources []string         // exclude sources, stamped in stamps
	stamps  []stamp
	cache   *watchCache
	loaded  []string // the cache's ignored entries
	ignored map[string]bool
	usable  bool
}

// startTreeWatch watches the tree at top; call it before the walk it
// stands in for. It returns nil when there is no cache to keep.
func startTreeWatch(ctx context.Context, r *repo, cache *watchCache) *treeWatch {
	if cache == nil {
		return nil
	}
	w := &treeWatch{fd: -1, cache: cache}
	loaded, ok := cache.load(r.top)
	if !ok {
		return w // the first writer on this tree: it fills the cache
	}
	w.loaded = loaded
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return w
	}
	w.fd, w.dirs = fd, map[int32]string{}
	w.sources = excludeSources(ctx, r)
	for _, s := range w.sources {
		w.stamps = append(w.stamps, lstamp(s))
	}
	skip := map[string]bool{}
	for _, p := range loaded {
		skip[p] = true
	}
	w.usable = w.walk(r.top, "", skip, make([]byte, 32<<10)) == nil
	if !w.usable {
		w.close()
	}
	return w
}

// walk watches the directory abs (rel below the top) and those beneath
// it; a nested repository or any failure ends it with an error.
func (w *treeWatch) walk(abs, rel string, skip map[string]bool, buf []byte) error {
	wd, err := unix.InotifyAddWatch(w.fd, abs, watchMask)
	if err != nil {
		return err
	}
	w.dirs[int32(wd)] = rel
	// Listed after the watch is set: an entry made later is an event.
	subs, err := dirents.Subdirs(abs, rel == "", buf, ".git")
	if err != nil {
		return err
	}
	for _, e := range subs {
		name, sub := e.Name, e.Name
		if rel != "" {
			sub = rel + "/" + name
		}
		switch {
		case name == ".git" && rel == "":
			continue // the repository's own: the index and sources are stamped
		case name == ".git":
			return errors.New("a nested repository")
		case skip[sub]:
			w.skipped = append(w.skipped, sub)
			continue
		}
		if err := w.walk(abs+"/"+name, sub, skip, buf); err != nil {
			return err
		}
	}
	return nil
}

// settle takes the spawn walk's ignored entries: a directory the watch
// left out that the walk does not find ignored makes the watch unusable.
// The entries go to the cache for the next writer.
func (w *treeWatch) settle(top string, ignored []string) {
	if w == nil {
		return
	}
	w.cache.store(top, ignored, w.loaded)
	w.ignored = map[string]bool{}
	for _, p := range ignored {
		w.ignored[p] = true
	}
	for _, s := range w.skipped {
		if !underAny(s, w.ignored) {
			w.usable = false
		}
	}
	if !w.usable {
		w.close()
	}
}

// quiet reports whether nothing outside the ignored entries changed since
// the watch was set, and git's exclude sources are as they were. It reads
// the events queued so far; call it once.
func (w *treeWatch) quiet() bool {
	if w == nil || !w.usable || w.ignored == nil {
		return false
	}
	defer w.close()
	for i, s := range w.sources {
		if lstamp(s) != w.stamps[i] {
			return false
		}
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(w.fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return true
		}
		if err != nil || n <= 0 || !w.quietEvents(buf[:n]) {
			return false
		}
	}
}

// quietEvents reports whether every inotify event in buf is beneath an
// ignored entry.
func (w *treeWatch) quietEvents(buf []byte) bool {
	for len(buf) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(buf[0:]))
		mask := binary.NativeEndian.Uint32(buf[4:])
		n := int(binary.NativeEndian.Uint32(buf[12:]))
		if unix.SizeofInotifyEvent+n > len(buf) || mask&unix.IN_Q_OVERFLOW != 0 {
			return false
		}
		name := buf[unix.SizeofInotifyEvent : unix.SizeofInotifyEvent+n]
		if i := slices.Index(name, 0); i >= 0 {
			name = name[:i]
		}
		buf = buf[unix.SizeofInotifyEvent+n:]
		dir, ok := w.dirs[wd]
		if !ok {
			return false
		}
		p := dir
		if len(name) > 0 {
			p = joinRel(dir, string(name))
		}
		if p == "" || !underAny(p, w.ignored) {
			return false
		}
	}
	return len(buf) == 0
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func (w *treeWatch) close() {
	if w != nil && w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
}
