package taskdir

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// CheckoutState is the directory of brood's own records about one git
// checkout (its fleet calls' sent starts and landings, the submitter's
// capture index): StateBase/checkouts/H, H the first 32 hex digits of the
// SHA-256 of commonDir, the checkout's common git dir as the caller
// resolved it (absolute, links followed). It lives outside every tree a
// child may write and is hidden from every child with the rest of
// StateBase (isolate.stateBaseHidden), where a record under the git dir
// is only as safe as the kernel's hold of it. "" without a home. Nothing
// is made (CheckoutDir places it).
func CheckoutState(commonDir string) string {
	base := StateBase()
	if base == "" || !filepath.IsAbs(commonDir) {
		return ""
	}
	sum := sha256.Sum256([]byte(filepath.Clean(commonDir)))
	return filepath.Join(base, checkoutsDir, hex.EncodeToString(sum[:16]))
}

// DirID is a directory's identity as its file system keeps it: the file
// system's id, inode and birth time (DirIdentity). A rename or a move
// within the file system keeps it; a copy, a clone, a directory made anew
// (also one given the inode number of a deleted one: its birth time
// differs) has another, and no process can give a directory the identity
// of another. So it names a checkout wherever the checkout is moved, where
// a secret file in its git dir, which brood kept before, is one any child
// can read and copy into another checkout (review35 P3-9).
type DirID struct {
	FS    uint64 `json:"fs"`
	Ino   uint64 `json:"ino"`
	Birth int64  `json:"birth_ns"`
}

// checkoutNote is what a checkout's record directory says of the
// checkout it is for (checkoutNoteFile): its common git dir, and that
// directory's identity.
type checkoutNote struct {
	Common string `json:"common"`
	ID     *DirID `json:"id,omitempty"`
}

const (
	checkoutNoteFile = "checkout.json"
	maxNote          = 64 << 10
	// placingLock, in checkouts/, is held while a checkout's directory is
	// set aside, taken over or made (never waited for: placement is
	// skipped while another brood places).
	placingLock = ".placing.lock"
)

// CheckoutDir is the record directory of the checkout whose common git dir
// is common (absolute, links followed: CheckoutState), placed. Where its
// note names this common dir and identity, it is as it is. Else, one at a
// time across brood processes: a directory whose note names another
// identity is the records of another checkout that was at this path (one
// moved away, or deleted, and this one made anew here: a clone, git init)
// and is set aside under a name of its own, where that checkout, moved,
// can still take it over (the set-aside ones beyond the newest 16, or
// older than 30 days, are pruned then: pruneSetAside); where none is left, the directory this
// checkout kept before it was moved or renamed is taken over (takeOver),
// else it is made (0700); and the checkout is noted in it (its common dir
// and that directory's identity, checkout.json). A directory an older
// brood made, with no identity noted, is this checkout's, as it was.
// Best effort: a placement that fails, or that another brood is making
// now, leaves every record where it is (a moved checkout's calls are then
// unverified, as without a record); on a file system that keeps no birth
// time nothing is placed. "" without a home, and where another
// checkout's records could not be set aside.
func CheckoutDir(common string) string {
	dir := CheckoutState(common)
	if dir == "" {
		return ""
	}
	id, ok := DirIdentity(common)
	if !ok {
		return dir
	}
	if noted(dir, common, id) {
		return dir
	}
	if MakeStateDir(filepath.Dir(dir)) != nil {
		return dir
	}
	unlock, ok := tryLock(filepath.Join(filepath.Dir(dir), placingLock))
	if !ok {
		return dir
	}
	defer unlock()
	var n checkoutNote
	err := ReadStateJSON(filepath.Join(dir, checkoutNoteFile), maxNote, &n)
	if err == nil && n.ID != nil && *n.ID != id {
		now := time.Now()
		if setAside(dir, now) != nil {
			return "" // another checkout's records, left where they are: none kept here
		}
		pruneSetAside(filepath.Dir(dir), now)
	}
	err = CheckStateDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		takeOver(dir, id)
		err = MakeStateDir(dir)
	}
	if err == nil {
		_ = WriteStateJSON(filepath.Join(dir, checkoutNoteFile), &checkoutNote{Common: common, ID: &id})
	}
	return dir
}

// noted is whether dir's note names common with identity id.
func noted(dir, common string, id DirID) bool {
	var n checkoutNote
	return ReadStateJSON(filepath.Join(dir, checkoutNoteFile), maxNote, &n) == nil && n.Common == common && n.ID != nil && *n.ID == id
}

// tryLock takes the flock of file (LockStateFile) if it is free now.
func tryLock(file string) (unlock func(), ok bool) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	unlock, err := LockStateFile(ctx, file)
	return unlock, err == nil
}

// setAside renames dir, a checkout's directory, to a fresh name beside
// it, never over anything: asidePrefix, the time in nanoseconds (16 hex
// digits) and 10 random hex digits, 32 in all as a checkout's are, so a
// moved checkout can take it over (takeOver) and a prune knows it and
// its age (pruneSetAside).
func setAside(dir string, now time.Time) error {
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	name := fmt.Sprintf("%s%016x%s", asidePrefix, uint64(now.UnixNano()), hex.EncodeToString(b[:]))
	return renameIn(dir, filepath.Base(dir), name)
}

// renameIn renames from to to, both names in the checkouts directory
// holding dir, never over anything.
func renameIn(dir, from, to string) error {
	base, rel, err := stateRel(filepath.Dir(dir))
	if err != nil {
		return err
	}
	d, err := openFileBeneath(base, rel, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return renameNoReplace(int(d.Fd()), from, int(d.Fd()), to)
}

// takeOver renames to dir (a checkout's, missing) the one directory under
// checkouts/ whose note names a common git dir of exactly the identity id
// that is gone from its path (nothing there, or another directory): the
// same checkout, moved or renamed. Nothing where none is, or more than
// one, or anything is off (a link, a note unreadable): only a directory
// the file system says is this one, and that is no longer where it was,
// is taken, so neither a copy of the checkout nor another that a child
// gave a file of this one's takes its records, whether or not it is
// still where it was (on a disk since unmounted, say: its identity is its
// file system's), nor does a second path to it (a bind mount).
func takeOver(dir string, id DirID) {
	checkouts := filepath.Dir(dir)
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
	from := ""
	for _, name := range names {
		if len(name) != 32 || name == filepath.Base(dir) {
			continue
		}
		var n checkoutNote
		if ReadStateJSON(filepath.Join(checkouts, name, checkoutNoteFile), maxNote, &n) != nil || n.ID == nil || *n.ID != id || !filepath.IsAbs(n.Common) {
			continue
		}
		if there, ok := DirIdentity(n.Common); ok && there == id {
			continue // still where it was
		}
		if from != "" {
			return // two: neither is surely this checkout's
		}
		from = name
	}
	if from != "" {
		_ = renameIn(dir, from, filepath.Base(dir))
	}
}
