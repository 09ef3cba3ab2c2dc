package session

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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
	// FirstLine is the sha256 of the transcript's first line (the meta
	// record brood writes when the session starts, never rewritten),
	// sealed in once it is written (Writer, Fork): a transcript put in
	// its place (copied, or pulled over an ignored file) is not this one.
	FirstLine string `json:"first_line_sha256,omitempty"`
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
	return writeOwner(path, Owner{Version: 1, SessionID: IDOf(path), Created: time.Now().UTC(), ForkedFrom: forkedFrom})
}

// writeOwner seals o under the kind bound to the transcript's directory
// (its real path: the project's .brood/sessions) and writes it.
func writeOwner(path string, o Owner) error {
	o.Seal = ""
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	o.Seal = taskdir.SealWithKey(ownerKind(path), data)
	if data, err = json.MarshalIndent(o, "", "  "); err != nil {
		return err
	}
	return writeAtomic(OwnerPath(path), append(data, '\n'))
}

// ownerKind is the owner seal's kind bound to the real path of the
// directory the transcript is in: an owner record copied to another
// project does not hold there.
func ownerKind(path string) string {
	return ownerSealKind + "\x00" + realPath(filepath.Dir(path))
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	a, _ := filepath.Abs(p)
	return a
}

// claimFirst seals the sha256 of the transcript's first line (line) into
// its owner record, when it has one of the user's without it yet (the
// session's first record was just written, or a fork was copied).
func claimFirst(path string, line []byte) {
	var o Owner
	if readOwner(OwnerPath(path), &o) != nil || o.FirstLine != "" || !sealHolds(path, o) {
		return
	}
	sum := sha256.Sum256(line)
	o.FirstLine = hex.EncodeToString(sum[:])
	_ = writeOwner(path, o) // unsealed is said when the session is continued
}

// sealHolds reports whether o, path's owner record, names path's session
// and carries a seal of the user's for this directory.
func sealHolds(path string, o Owner) bool {
	seal := o.Seal
	o.Seal = ""
	data, err := json.Marshal(o)
	return err == nil && o.SessionID == IDOf(path) && taskdir.HoldsWithKey(ownerKind(path), data, seal)
}

// Mine checks that the transcript at path is a session this user's brood
// made: its owner record is there, names it, and its seal holds. Else the
// error (errors.Is taskdir.ErrNotYours) names the session and what to do.
func Mine(path string) error {
	id := IDOf(path)
	var o Owner
	if err := readOwner(OwnerPath(path), &o); errors.Is(err, errCutShort) {
		return notYours{fmt.Sprintf("session %s cannot be continued: its owner record %s is empty or cut short (brood was stopped by a power cut or crash before the record reached the disk, or a repository shipped it so); not continued: %s", id, OwnerPath(path), workaround)}
	} else if err != nil {
		return notYours{fmt.Sprintf("session %s was not made by you (%v): a repository may have shipped it, or a brood from before sessions were sealed made it; not continued: %s", id, err, workaround)}
	}
	if !sealHolds(path, o) {
		return notYours{fmt.Sprintf("session %s was not made by you (its owner record %s carries no seal made with your record key %s for this project): a repository may have shipped it; not continued: %s", id, OwnerPath(path), taskdir.KeyPath(), workaround)}
	}
	if first, err := firstLine(path); err != nil || (first == nil) != (o.FirstLine == "") || (first != nil && hexSum(first) != o.FirstLine) {
		return notYours{fmt.Sprintf("session %s was not made by you (its transcript %s is not the one its owner record was sealed for: a repository may have shipped it, or a git pull replaced it); not continued: %s", id, path, workaround)}
	}
	return nil
}

// workaround is what a refusal of Mine tells the user to do.
const workaround = "start a new one with brood run \"...\", or, if it is yours (made by a brood from before sessions were sealed), copy it outside .brood/sessions and continue the copy with --session PATH (docs/trust.md, \"Records a repository ships\")"

func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// maxFirstLine bounds the first line read (a meta record: the system
// prompt and a few fields).
const maxFirstLine = 16 << 20

// firstLine is the transcript's first line with its newline (nil: none
// yet), read without following a link or blocking on a FIFO.
func firstLine(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	line, err := bufio.NewReaderSize(io.LimitReader(f, maxFirstLine), 64<<10).ReadBytes('\n')
	if errors.Is(err, io.EOF) {
		if len(line) == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: its first line is torn or too long", path)
	}
	return line, err
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
		var syn *json.SyntaxError
		if len(bytes.TrimSpace(data)) == 0 || errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errCutShort
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// errCutShort is readOwner's error for a record that is empty or not
// whole JSON: what a power cut before its sync leaves (writeAtomicLater).
var errCutShort = errors.New("the owner record is empty or cut short")

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
