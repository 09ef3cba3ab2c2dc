package taskdir

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A checkout made anew where another was (a clone, git init) sets the
// other's records aside under a random name (CheckoutDir), where that
// checkout, moved, can still take them over. Nothing else ever reaches
// them, so they are pruned when one more is set aside: beyond the
// keepSetAside newest, and any set aside more than setAsideAge ago.
const (
	keepSetAside = 16
	setAsideAge  = 30 * 24 * time.Hour
	// pruning prefixes a set-aside directory being removed: no
	// checkout's name (takeOver passes it by), and one a prune that died
	// left is removed by the next.
	pruning = ".pruning-"
	// asidePrefix begins a set-aside directory's name (setAside): no
	// checkout's own (those are hex digits only).
	asidePrefix = "aside-"
)

// setAsideDir is one directory of another checkout's records set aside.
type setAsideDir struct {
	name string
	at   time.Time // when it was set aside (its name says)
}

// pruneSetAside removes the set-aside directories of checkouts, the
// checkouts directory, beyond the keepSetAside newest and those older
// than setAsideAge at now, and what an earlier prune left. The caller
// holds placingLock, so no brood takes one over meanwhile; a directory
// whose lock some brood holds (a landing or a sent record's, taken before
// it was set aside) is left as it is. Best effort: whatever fails stays.
func pruneSetAside(checkouts string, now time.Time) {
	base, rel, err := stateRel(checkouts)
	if err != nil {
		return
	}
	d, err := openFileBeneath(base, rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return
	}
	var aside []setAsideDir
	for _, name := range names {
		if strings.HasPrefix(name, pruning) {
			removeUnheld(checkouts, name)
			continue
		}
		if at, ok := setAsideAt(name); ok {
			aside = append(aside, setAsideDir{name, at})
		}
	}
	slices.SortFunc(aside, func(a, b setAsideDir) int { return cmp.Or(b.at.Compare(a.at), strings.Compare(b.name, a.name)) })
	for i, s := range aside {
		if i < keepSetAside && now.Sub(s.at) < setAsideAge {
			continue
		}
		if renameIn(filepath.Join(checkouts, s.name), s.name, pruning+s.name) == nil {
			removeUnheld(checkouts, pruning+s.name)
		}
	}
}

// setAsideAt says whether name, in checkouts, is a set-aside directory
// (setAside's name), and when it was set aside. One an older brood set
// aside (32 random hex digits) is not known as one, and stays.
func setAsideAt(name string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(name, asidePrefix)
	if !ok || len(name) != 32 || len(rest) < 16 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseUint(rest[:16], 16, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, int64(ns)), true
}

// removeUnheld removes name, a directory in checkouts, unless a lock in
// it is held: every lock file of its fleet records (a landing's, a sent
// record's) is taken, without waiting, and held while it goes; one that
// is busy leaves it (renamed back to its own name when it was being
// pruned, so the checkout can still take it over).
func removeUnheld(checkouts, name string) {
	dir := filepath.Join(checkouts, name)
	locks, err := filepath.Glob(filepath.Join(dir, "fleet", "*", "*"))
	if err != nil {
		return
	}
	var held []func()
	defer func() {
		for _, unlock := range held {
			unlock()
		}
	}()
	for _, f := range locks {
		if b := filepath.Base(f); b != Lock && !strings.HasSuffix(b, ".lock") {
			continue
		}
		unlock, ok := tryLockOnly(f)
		if !ok {
			if orig, was := strings.CutPrefix(name, pruning); was {
				_ = renameIn(dir, name, orig)
			}
			return
		}
		held = append(held, unlock)
	}
	_ = os.RemoveAll(dir)
}

// tryLockOnly takes file's flock if it is free now, never making it: a
// file that is not there, a link, or anything but a regular file is no
// lock anyone holds (true, nothing to unlock).
func tryLockOnly(file string) (unlock func(), ok bool) {
	base, rel, err := stateRel(file)
	if err != nil {
		return nil, false
	}
	f, err := openFileBeneath(base, rel, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return func() {}, true
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return func() {}, true
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}
