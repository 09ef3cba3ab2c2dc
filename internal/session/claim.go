package session

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/taskdir"
)

// Pending is a new session's owner record not written yet: the
// transcript's Writer (Options.Claim) writes it once, sealed with the
// sha256 of the transcript's first line, just before the transcript
// appears with that line in it, and syncs it in the background (Close
// waits for the sync). Claim's two synced writes (the record, then again
// with the first line's hash) were on the root's path to its first model
// request; this is one, unsynced there. A kill of brood at any moment
// leaves the pair whole, or a record without a transcript (not listed,
// nothing to continue), or neither; only a power cut before Close can
// lose the record or leave it empty, and then the session is refused to
// continue, saying why (Mine).
type Pending struct {
	path    string
	owner   Owner
	written bool // renamed into place
	// sync is the background fsync's outcome (nil until it is started).
	sync chan error
}

// ErrNotMade is (errors.Is) the error of a new session whose owner
// record or transcript could not be made (Options.Claim): nothing of it
// is written, and a run does not start on it, as it did not when Claim
// failed at the session's start.
var ErrNotMade = errors.New("session: the new session could not be made")

// claimError is a new session's failed start: its line, and ErrNotMade.
type claimError struct{ line string }

func (e claimError) Error() string        { return e.line }
func (e claimError) Is(target error) bool { return target == ErrNotMade }

// ClaimLater is Claim for a new session whose transcript the caller then
// opens with Options{Claim: the result}: nothing is written until the
// transcript's first line is.
func ClaimLater(path, forkedFrom string) *Pending {
	return &Pending{path: path, owner: Owner{Version: 1, SessionID: IDOf(path), Created: time.Now().UTC(), ForkedFrom: forkedFrom}}
}

// write writes the owner record, with first's sha256 when first is not
// nil, once; later calls do nothing.
func (c *Pending) write(first []byte) error {
	if c.written {
		return nil
	}
	o := c.owner
	if first != nil {
		sum := sha256.Sum256(first)
		o.FirstLine = hex.EncodeToString(sum[:])
	}
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	o.Seal = taskdir.SealWithKey(ownerKind(c.path), data)
	if data, err = json.MarshalIndent(o, "", "  "); err != nil {
		return err
	}
	sync, err := writeAtomicLater(OwnerPath(c.path), append(data, '\n'))
	if err != nil {
		// As Claim's failure said it at the session's start, with what to do.
		return claimError{fmt.Sprintf("session owner record %s: %v; the session could not be continued without it, so it was not started: remove what is in the record's place or make %s writable, then run again", OwnerPath(c.path), err, filepath.Dir(c.path))}
	}
	c.sync, c.written = sync, true
	return nil
}

// wait waits for the record's background sync, if one was started.
func (c *Pending) wait() error {
	if c.sync == nil {
		return nil
	}
	err := <-c.sync
	c.sync = nil
	return err
}

// writeAtomicLater is writeAtomic whose fsync (of the file, then of its
// directory) runs in a goroutine of its own after the rename: the record
// is in place for every process when it returns. The channel gets the
// sync's outcome. A power cut before the sync can leave the record
// empty or cut short (Mine says so).
func writeAtomicLater(path string, data []byte) (chan error, error) {
	dir := filepath.Dir(path)
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		d.Close()
		return nil, err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		d.Close()
		return nil, err
	}
	if err := unix.Renameat(int(d.Fd()), filepath.Base(tmp), int(d.Fd()), filepath.Base(path)); err != nil {
		f.Close()
		os.Remove(tmp)
		d.Close()
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		defer d.Close()
		err := errors.Join(f.Sync(), f.Close())
		if err == nil {
			err = d.Sync()
		}
		if err != nil {
			err = fmt.Errorf("session owner record %s: %w", path, err)
		}
		done <- err
	}()
	return done, nil
}
