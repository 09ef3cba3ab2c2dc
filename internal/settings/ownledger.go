package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/trust"
)

// The own-files ledger: the project local files (.brood/settings.local.toml
// and the like) that brood itself wrote for this user, each with the
// SHA-256 of the content it wrote, in the user's state directory
// ($XDG_STATE_HOME/brood/own-local-files.json: never in a project, hidden
// from every child). Each entry carries a seal under the user's record key
// (taskdir.Seal), as owner records do, so an entry that is not brood's own
// vouches for nothing. A local file whose content an entry vouches for is
// the person's own (PersonalNeedsTrust); changed by anyone else since, it
// is not.

// OwnLedgerName is the ledger's name in the user's state directory.
const OwnLedgerName = "own-local-files.json"

// ownLedgerMax bounds the ledger: the oldest entries go first.
const ownLedgerMax = 2048

// ownSealKind keeps a ledger entry's seal from passing for another record's.
const ownSealKind = "own-local-file"

type ownLedger struct {
	Version int        `json:"version"`
	Files   []ownEntry `json:"files"` // newest first
}

type ownEntry struct {
	Root   string `json:"root"` // trust.Key of the project root
	Rel    string `json:"rel"`  // project-relative, slash-separated
	SHA256 string `json:"sha256"`
	Seal   string `json:"seal"`
}

func (e ownEntry) sealed() []byte {
	return []byte(e.Root + "\x00" + e.Rel + "\x00" + e.SHA256)
}

func ownLedgerPath() string {
	base := taskdir.StateBase()
	if base == "" {
		return ""
	}
	return filepath.Join(base, OwnLedgerName)
}

func readOwnLedger(path string) ownLedger {
	var l ownLedger
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return l
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > 4<<20 {
		return l
	}
	_ = json.NewDecoder(f).Decode(&l) // unreadable: it vouches for nothing
	return l
}

// OwnLocalRecorded reports whether brood wrote the local file rel under
// root with exactly data for this user (a sealed ledger entry says so).
// Without a state directory or a record key (a child: both are hidden
// from it) nothing is.
func OwnLocalRecorded(root, rel string, data []byte) bool {
	path := ownLedgerPath()
	if path == "" || root == "" {
		return false
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(path), taskdir.RecordKeyName)); err != nil {
		return false // no key yet: nothing was ever sealed (and none is made here)
	}
	key, err := taskdir.RecordKey()
	if err != nil {
		return false
	}
	want := ownEntry{Root: trust.Key(root), Rel: filepath.ToSlash(rel), SHA256: trust.Sum(data)}
	for _, e := range readOwnLedger(path).Files {
		if e.Root == want.Root && e.Rel == want.Rel && e.SHA256 == want.SHA256 {
			return taskdir.SealHolds(key, ownSealKind, want.sealed(), e.Seal)
		}
	}
	return false
}

// RecordOwnLocal notes in the ledger that brood wrote the local file rel
// under root with data for this user (replacing what it noted for that
// file before). Only brood's own writers of a person's answers call it,
// with what they wrote.
func RecordOwnLocal(root, rel string, data []byte) error {
	path := ownLedgerPath()
	if path == "" || root == "" {
		return errors.New("no state directory to note brood's own local files in (set HOME or XDG_STATE_HOME)")
	}
	key, err := taskdir.RecordKey()
	if err != nil {
		return err
	}
	e := ownEntry{Root: trust.Key(root), Rel: filepath.ToSlash(rel), SHA256: trust.Sum(data)}
	e.Seal = taskdir.Seal(key, ownSealKind, e.sealed())
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("%s: %w (brood could not note the file it wrote; later runs ask for `brood trust` for it)", path, err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("%s: lock: %w", path, err)
	}
	l := readOwnLedger(path)
	l.Version = 1
	l.Files = slices.DeleteFunc(l.Files, func(x ownEntry) bool { return x.Root == e.Root && x.Rel == e.Rel })
	l.Files = append([]ownEntry{e}, l.Files...)
	if len(l.Files) > ownLedgerMax {
		l.Files = l.Files[:ownLedgerMax]
	}
	data, err = json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	// 0600 (os.CreateTemp's mode), synced, tmp+rename.
	if err := dispatch.WriteFileAtomic(path, append(data, '\n')); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// IsLocalFile reports whether rel (project-relative) is a person's local
// settings file by its name (settings.local.json, settings.local.toml, …).
func IsLocalFile(rel string) bool {
	return strings.Contains(filepath.Base(rel), ".local.")
}
