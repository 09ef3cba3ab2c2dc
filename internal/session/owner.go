package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/broodhq/brood/internal/taskdir"
)

// OwnerSuffix names a session's owner record, beside its transcript
// (.brood/sessions/<id>.owner.json next to <id>.jsonl).
const OwnerSuffix = ".owner.json"

// ownerSealKind is the seal kind of a session's owner record (a task's
// owner record's seal never passes for one).
const ownerSealKind = "session-owner"

// maxOwner bounds the owner record read: brood's own is a few hundred bytes.
const maxOwner = 64 << 10

// Owner is the record that says a transcript is a session this user's
// brood started: written once, when the session is made (or forked), by
// the process that makes it, and sealed with the user's record key
// (taskdir.RecordKey). A repository can commit .brood/sessions/: a
// transcript whose owner record is missing or whose seal does not hold is
// never continued as the user's (brood run --continue, --resume, the
// interactive mode's).
type Owner struct {
	Version   int       `json:"version"`
	SessionID string    `json:"session_id"`
	Created   time.Time `json:"created"`
	// ForkedFrom is the session this one was copied from (--fork-session).
	ForkedFrom string `json:"forked_from,omitempty"`
	// Seal is brood's HMAC of the record (its encoding with Seal empty)
	// under the user's record key; empty when no key could be made.
	Seal string `json:"seal,omitempty"`
}

// OwnerPath is the owner record of the transcript at path.
func OwnerPath(transcript string) string {
	return strings.TrimSuffix(transcript, ".jsonl") + OwnerSuffix
}

// IDOf is the session id of the transcript at path (its file name less
// .jsonl).
func IDOf(transcript string) string {
	return strings.TrimSuffix(filepath.Base(transcript), ".jsonl")
}

// Claim writes the owner record of the new session whose transcript is at
// path (forkedFrom: the session it copies, or ""), sealed with the user's
// record key; without one (no state directory) it is written unsealed and
// the session is not offered to continue later, which a listing says.
// Synced, tmp+rename.
func Claim(path, forkedFrom string) error {
	o := Owner{Version: 1, SessionID: IDOf(path), Created: time.Now().UTC(), ForkedFrom: forkedFrom}
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	o.Seal = taskdir.SealWithKey(ownerSealKind, data)
	if data, err = json.MarshalIndent(o, "", "  "); err != nil {
		return err
	}
	return writeAtomic(OwnerPath(path), append(data, '\n'))
}

// Mine checks that the transcript at path is a session this user's brood
// made: its owner record is there, names it, and its seal holds. Else the
// error (errors.Is taskdir.ErrNotYours) names the session and what to do.
func Mine(path string) error {
	id := IDOf(path)
	var o Owner
	if err := readOwner(OwnerPath(path), &o); err != nil {
		return notYours{fmt.Sprintf("session %s was not made by you (%v): a repository may have shipped it, or a brood from before sessions were sealed made it; not continued: start a new one with brood run \"...\" (docs/trust.md, \"Records a repository ships\")", id, err)}
	}
	seal := o.Seal
	o.Seal = ""
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	if o.SessionID != id || !taskdir.HoldsWithKey(ownerSealKind, data, seal) {
		return notYours{fmt.Sprintf("session %s was not made by you (its owner record %s carries no seal made with your record key %s): a repository may have shipped it; not continued: start a new one with brood run \"...\" (docs/trust.md, \"Records a repository ships\")", id, OwnerPath(path), taskdir.KeyPath())}
	}
	return nil
}

// notYours is Mine's refusal: its line, and taskdir.ErrNotYours to errors.Is.
type notYours struct{ line string }

func (e notYours) Error() string { return e.line }
func (e notYours) Unwrap() error { return taskdir.ErrNotYours }

// Split parts ids, sessions of the directory dir, into the user's own
// (Mine) and the others, each in the order given.
func Split(dir string, ids []string) (mine, others []string) {
	for _, id := range ids {
		if Mine(filepath.Join(dir, id+".jsonl")) == nil {
			mine = append(mine, id)
		} else {
			others = append(others, id)
		}
	}
	return mine, others
}

// LeftOut is the line a listing of dir prints for the n sessions it left
// out, and why.
func LeftOut(dir string, n int) string {
	return fmt.Sprintf("brood: %d session(s) in %s carry no seal made with your record key (%s): not continued. A repository shipped them, or a brood from before sessions were sealed (or with another HOME or XDG_STATE_HOME) made them; docs/trust.md, \"Records a repository ships\"", n, dir, taskdir.KeyPath())
}

// InDir reports whether path is a transcript directly in dir (a path
// --session names is checked as a listed one when it is brood's own).
func InDir(dir, path string) bool {
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		a, _ := filepath.Abs(p)
		return a
	}
	return real(filepath.Dir(path)) == real(dir)
}

// readOwner reads an owner record without following a link or blocking
// (a repository can put a FIFO there).
func readOwner(file string, o *Owner) error {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("it has no owner record")
		}
		return err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", file)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxOwner))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, o); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// writeAtomic writes data to path through a temporary file beside it,
// synced, then renamed into place (a link at path is replaced, never
// written through).
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("session owner record: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("session owner record: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("session owner record %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("session owner record %s: %w", path, err)
	}
	return nil
}
