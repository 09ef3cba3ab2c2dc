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
// sha256 of the transcript's first line, just before it writes that line,
// and syncs it in the background (Close waits for the sync). Claim's two
// synced writes (the record, then again with the first line's hash) were
// on the root's path to its first model request; this is one, unsynced
// there. A crash of brood after the first line loses nothing (the record
// is renamed into place before the line is written); only a power cut
// before Close can lose the record, and then the session is refused to
// continue, saying why (Mine), as one without a record always is.
type Pending struct {
	path    string
	owner   Owner
	written bool
	// sync is the background fsync's outcome (nil until it is started).
	sync chan error
}

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
	c.written = true
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
	c.sync, err = writeAtomicLater(OwnerPath(c.path), append(data, '\n'))
	return err
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
// sync's outcome.
func writeAtomicLater(path string, data []byte) (chan error, error) {
	dir := filepath.Dir(path)
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("session owner record: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("session owner record: %w", err)
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		d.Close()
		return nil, fmt.Errorf("session owner record %s: %w", path, err)
	}
	if err := unix.Renameat(int(d.Fd()), filepath.Base(tmp), int(d.Fd()), filepath.Base(path)); err != nil {
		f.Close()
		os.Remove(tmp)
		d.Close()
		return nil, fmt.Errorf("session owner record %s: %w", path, err)
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
