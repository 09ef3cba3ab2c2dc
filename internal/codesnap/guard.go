package codesnap

import (
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A guard is the kernel's word that a verified checkout is as the stat
// check that armed it found it, so that a later use checks a flag, not
// every file (statplan.go's check grows with the tree: a stat per file).
// It holds, for the checkout's every directory and file:
//
//   - an inotify watch (by inode, so a hard link elsewhere is watched
//     too) for what changes a file or a directory's names: IN_MODIFY,
//     IN_ATTRIB (mode, owner, times, link count), IN_CLOSE_WRITE,
//     IN_CREATE, IN_DELETE, IN_MOVED_FROM/TO, IN_DELETE_SELF,
//     IN_MOVE_SELF; the kernel adds IN_Q_OVERFLOW, IN_IGNORED, IN_UNMOUNT;
//   - per regular file, a read lease (F_SETLEASE F_RDLCK) on a descriptor
//     it keeps open. inotify says nothing of a write through a shared
//     writable mapping, but a mapping needs a descriptor open for
//     writing: the lease is refused while one exists (so arming proves
//     there is none, a mapping made before included), and any later open
//     for writing or truncate breaks it (the kernel sends this process
//     SIGIO and holds the opener until the lease is let go).
//
// Any event, any SIGIO (the signal names no file), an event queued and
// not yet seen, trips the guard: it lets go of every lease (the opener
// goes on) and closes its watches, and from then on says nothing; the
// next use makes the stat check, which decides, and arms a new guard when
// it passes. A guard is armed after its watches and leases are in place
// and a stat check has passed, so nothing that changes the checkout
// between that check and a use goes unseen. Root (who can write through
// a device or change a file's times) is outside it, as outside the stat
// check.
type guard struct {
	ino    *os.File // the inotify instance
	leases []int    // descriptors holding the read leases
	sig    chan os.Signal
	done   chan struct{}
	// tripped is set before anything the trip lets go of.
	tripped atomic.Bool
	once    sync.Once
}

// maxGuarded bounds the files a guard holds a descriptor for (the
// process's descriptor limit is shared with every call's children and
// git): a larger checkout keeps the per-use stat check.
const maxGuarded = 4096

// guardMask is what a watch reports (see guard).
const guardMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE |
	unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DONT_FOLLOW

// armGuard guards the checkout at tree, the verified plan p's (its index
// written at stamp): nil where it cannot (no inotify or leases here, too
// many files, a descriptor for writing open on one of them, a change
// while it armed, or a stat check that fails).
func armGuard(tree string, p *statPlan, stamp time.Time) *guard {
	if len(p.entries) > maxGuarded {
		return nil
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	g := &guard{ino: os.NewFile(uintptr(fd), "inotify"), sig: make(chan os.Signal, 1), done: make(chan struct{})}
	// The signal first: a lease broken while the others are taken trips
	// it at once, letting the opener go.
	signal.Notify(g.sig, syscall.SIGIO)
	go g.watch()
	if !g.hold(tree, p) || !p.clean(tree, stamp) || !g.quiet() {
		g.trip()
		return nil
	}
	return g
}

// hold adds the watches (each directory before the names in it, so a
// name swapped after its directory's watch is an event) and takes the
// leases.
func (g *guard) hold(tree string, p *statPlan) bool {
	dirs := make([]string, len(p.dirs))
	dirs[0] = tree
	for d := range p.dirs {
		if _, err := unix.InotifyAddWatch(int(g.ino.Fd()), dirs[d], guardMask|unix.IN_ONLYDIR); err != nil {
			return false
		}
		for _, k := range p.dirs[d].kids {
			dirs[k] = filepath.Join(dirs[d], p.dirs[k].name)
		}
		for _, i := range p.dirs[d].files {
			name := filepath.Join(dirs[d], p.base[i])
			if _, err := unix.InotifyAddWatch(int(g.ino.Fd()), name, guardMask); err != nil {
				return false
			}
			if p.entries[i].mode&^0o777 == 0o120000 {
				continue // a symlink: its target is changed only by a name's change
			}
			lf, err := unix.Open(name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
			if err != nil {
				return false
			}
			g.leases = append(g.leases, lf)
			if _, err := unix.FcntlInt(uintptr(lf), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
				return false // EAGAIN: open for writing (a mapping too)
			}
		}
	}
	return true
}

// watch trips the guard on a SIGIO, or as soon as an event is queued (it
// reads none: quiet sees what is queued until the trip closes it).
func (g *guard) watch() {
	rc, err := g.ino.SyscallConn()
	if err != nil {
		g.trip()
		return
	}
	go func() {
		select {
		case <-g.sig:
			g.trip()
		case <-g.done:
		}
	}()
	rc.Read(func(fd uintptr) bool {
		n, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD
		if err != nil || n > 0 {
			g.tripped.Store(true)
			return true
		}
		return false // wait until one is
	})
	g.trip() // (not within Read: closing waits for it)
}

// quiet reports whether nothing has changed the checkout since the guard
// was armed: not tripped, no event queued. A false is final.
func (g *guard) quiet() bool {
	if g == nil || g.tripped.Load() {
		return false
	}
	rc, err := g.ino.SyscallConn()
	if err != nil {
		return false
	}
	n := -1
	if rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	}) != nil || n != 0 {
		g.trip()
		return false
	}
	return !g.tripped.Load()
}

// trip marks the guard tripped, then lets go of the leases (an opener
// held by one goes on) and the watches.
func (g *guard) trip() {
	if g == nil {
		return
	}
	g.tripped.Store(true)
	g.once.Do(func() {
		signal.Stop(g.sig)
		close(g.done)
		for _, fd := range g.leases {
			unix.Close(fd)
		}
		g.ino.Close()
	})
}
