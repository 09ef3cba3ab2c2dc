package taskdir

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// RecordKeyName is the file in the user's brood state directory
// (StateBase, hidden from every child) holding the key brood seals its own
// records with: a record in the project tree without a valid seal was
// not made by this user's brood (a repository can commit .brood/).
const RecordKeyName = "record-key"

const recordKeyLen = 32

// ErrNotYours is a record whose seal does not hold: brood did not write it
// for this user (a repository shipped it, or it predates seals).
var ErrNotYours = errors.New("not made by you (no valid seal from your brood: a repository may have shipped it); ignored")

// RecordKey is the user's record key, made (0600, in a 0700 directory) on
// first use.
func RecordKey() ([]byte, error) {
	base := StateBase()
	if base == "" {
		return nil, errors.New("no state directory for brood's record key (set HOME or XDG_STATE_HOME)")
	}
	path := filepath.Join(base, RecordKeyName)
	key, err := readKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("record key: %w", err)
	}
	key = make([]byte, recordKeyLen)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("record key: %w", err)
	}
	// Written whole under a name of its own, then linked into place: a
	// brood racing to make it reads either none or all of a key.
	tmp := path + ".tmp-" + NewID()
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("record key: %w", err)
	}
	defer os.Remove(tmp)
	_, werr := f.Write(key)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return nil, fmt.Errorf("record key %s: %w", path, err)
	}
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return readKey(path) // another brood made it first
	} else if err != nil {
		return nil, fmt.Errorf("record key %s: %w", path, err)
	}
	return key, nil
}

func readKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("record key %s: %w", path, ErrNotRegular)
	}
	key := make([]byte, recordKeyLen+1)
	n, err := io.ReadFull(f, key)
	if n != recordKeyLen || !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("record key %s is not %d bytes: remove it (records sealed with it will no longer be listed as yours)", path, recordKeyLen)
	}
	return key[:recordKeyLen], nil
}

// Seal is the seal of data (a record's encoding without its seal) under
// key, for a record of kind (so that one kind's seal never passes for
// another's).
func Seal(key []byte, kind string, data []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(kind))
	m.Write([]byte{0})
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// SealHolds reports whether seal is data's under key.
func SealHolds(key []byte, kind string, data []byte, seal string) bool {
	want := Seal(key, kind, data)
	return hmac.Equal([]byte(want), []byte(seal))
}

// SealWithKey is data's seal of kind under the user's record key, or ""
// when no key can be made (no state directory: a read-only HOME). The
// record is then written unsealed and a listing leaves it out, naming the
// key's path (KeyPath), as an owner record without a seal is: a run never
// fails for want of a seal.
func SealWithKey(kind string, data []byte) string {
	key, err := RecordKey()
	if err != nil {
		return ""
	}
	return Seal(key, kind, data)
}

// HoldsWithKey reports whether seal is data's of kind under the user's
// record key (false when there is no key, or no seal).
func HoldsWithKey(kind string, data []byte, seal string) bool {
	if seal == "" {
		return false
	}
	key, err := RecordKey()
	if err != nil {
		return false
	}
	return SealHolds(key, kind, data, seal)
}

// KeyPath is where the user's record key is kept ("" without a home), for
// a listing's line about the records it left out.
func KeyPath() string {
	if base := StateBase(); base != "" {
		return filepath.Join(base, RecordKeyName)
	}
	return "(no state directory: set HOME or XDG_STATE_HOME)"
}
