package taskdir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"

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

// DirID is a directory's identity as its file system keeps it: device,
// inode and birth time (statx). A rename or a move within the file system
// keeps it; a copy, a clone, a directory made anew (also one given the
// inode number of a deleted one: its birth time differs) has another, and
// no process can give a directory the identity of another. So it names a
// checkout wherever the checkout is moved, where a secret file in its git
// dir, which brood kept before, is one any child can read and copy into
// another checkout (review35 P3-9).
type DirID struct {
	Dev   uint64 `json:"dev"`
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
)

// CheckoutDir is the record directory of the checkout whose common git dir
// is common (absolute, links followed: CheckoutState), placed: where it is
// missing, the directory this checkout kept before it was moved or renamed
// is taken over (takeOver), else it is made (0700); and the checkout is
// noted in it (its common dir and that directory's identity,
// checkout.json), so that it can be found again after a move. Best
// effort: a placement that fails leaves every record where it was (a
// moved checkout's calls are then unverified, as without a record), and
// on a file system that keeps no birth time nothing is placed. "" without
// a home.
func CheckoutDir(common string) string {
	dir := CheckoutState(common)
	if dir == "" {
		return ""
	}
	id, ok := DirIdentity(common)
	if !ok {
		return dir
	}
	err := CheckStateDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		takeOver(dir, id)
		err = MakeStateDir(dir)
	}
	if err == nil {
		noteCheckout(dir, common, id)
	}
	return dir
}

// noteCheckout notes common and its identity id in dir, where its note
// says anything else (a common dir made anew at this path is the
// checkout here now).
func noteCheckout(dir, common string, id DirID) {
	file := filepath.Join(dir, checkoutNoteFile)
	var n checkoutNote
	if ReadStateJSON(file, maxNote, &n) == nil && n.Common == common && n.ID != nil && *n.ID == id {
		return
	}
	_ = WriteStateJSON(file, &checkoutNote{Common: common, ID: &id})
}

// takeOver renames to dir (a checkout's, missing) the one directory under
// checkouts/ whose note names a common git dir of exactly the identity id
// that no longer exists at its path: the same checkout, moved or renamed.
// Nothing where none is, or more than one, or anything is off (a link, a
// note unreadable): only a directory the file system says is this one,
// and that is gone from where it was, is taken, so neither a copy of the
// checkout nor another that a child gave a file of this one's takes its
// records, whether or not it is still where it was (on a disk since
// unmounted, say: its identity is its device's).
func takeOver(dir string, id DirID) {
	base, rel, err := stateRel(filepath.Dir(dir))
	if err != nil {
		return
	}
	d, err := openFileBeneath(base, rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return
	}
	from := ""
	for _, name := range names {
		if len(name) != 32 || name == filepath.Base(dir) {
			continue
		}
		var n checkoutNote
		if ReadStateJSON(filepath.Join(d.Name(), name, checkoutNoteFile), maxNote, &n) != nil || n.ID == nil || *n.ID != id || !filepath.IsAbs(n.Common) {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(n.Common, &st) != unix.ENOENT {
			continue
		}
		if from != "" {
			return // two: neither is surely this checkout's
		}
		from = name
	}
	if from != "" {
		_ = renameNoReplace(int(d.Fd()), from, int(d.Fd()), filepath.Base(dir))
	}
}
