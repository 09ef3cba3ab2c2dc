package spawn

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
)

// UndeliveredDir, beneath a task's inbox, keeps the steering messages the
// task never read because it ended first: the record that they were not
// delivered. The child's inbox reader skips directories, so a resume does
// not deliver them after the sender was told they were not.
const UndeliveredDir = "undelivered"

// maxSteer bounds one message read back from a task directory (the child
// can write there).
const maxSteer = 64 << 10

// sentDir, beneath the parent-owned records (.brood/records, which no
// child may write), keeps a copy of every steering message sent, one
// directory per task: the task's inbox is the child's to write, so a
// message found there counts as the sender's only when its copy is here,
// and it is shown as the copy says (a file the child planted in its inbox,
// or a message it rewrote, is never shown as the user's).
const sentDir = "steer"

// recordSent keeps the copy of a message Send wrote to task id's inbox as
// name (tmp+rename, 0600). A process that may not write the records (a
// child steering its own children) keeps none: those messages are then
// never reported undelivered.
func recordSent(projectRoot, id, name string, body []byte) error {
	dir, ok := sentPath(projectRoot, id)
	if !ok || !plainName(name) {
		return fmt.Errorf("no record of a message %q to task %q", name, id)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".sent.tmp*")
	if err != nil {
		return err
	}
	_, werr := f.Write(body)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}

// sentCopy is the copy of message name sent to task id, if one was kept.
func sentCopy(projectRoot, id, name string) ([]byte, bool) {
	dir, ok := sentPath(projectRoot, id)
	if !ok || !plainName(name) {
		return nil, false
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSteer))
	return b, err == nil
}

// sentPath is task id's directory of sent copies.
func sentPath(projectRoot, id string) (string, bool) {
	if taskdir.CheckID(id) != nil {
		return "", false
	}
	return filepath.Join(taskdir.Open(projectRoot).Records().Path(), sentDir, id), true
}

// plainName is a message file's name as Send makes it: one path element,
// not hidden.
func plainName(name string) bool {
	return name != "" && filepath.Base(name) == name && !strings.HasPrefix(name, ".") && name != ".."
}

// NotDeliveredError is a steering message that reached a task's inbox after
// the task had read its last one.
type NotDeliveredError struct {
	ID, Agent, Status string
}

func (e *NotDeliveredError) Error() string {
	return fmt.Sprintf("not delivered: task %s (%s) ended (status %s) before its next turn; resume it with this message instead (brood tasks resume %s \"...\")", e.ID, e.Agent, e.Status, e.ID)
}

// settle decides, after a message was written to the inbox as name, whether
// it can still be delivered: the task ends by writing its result, and reads
// no inbox after that, so a message still there once the task has ended
// never will be. Send writes first and looks second, so a message whose
// sender saw the task running is either read or found here by Undelivered.
// The rename decides the race with the child's reader (which removes what
// it reads): exactly one of the two gets the file.
func settle(f dispatch.Finder, id, name string) error {
	t, err := f.Load(id)
	if err != nil {
		return fmt.Errorf("message written to task %s's inbox, but whether it will be read is unknown: %w", id, err)
	}
	if t.Status == dispatch.StatusRunning || t.Status == dispatch.StatusQueued {
		return nil // still running: its next turn reads it
	}
	td := t.Files()
	if err := td.MkdirAll(filepath.Join(taskdir.Inbox, UndeliveredDir)); err != nil {
		return err
	}
	if err := td.Rename(filepath.Join(taskdir.Inbox, name), filepath.Join(taskdir.Inbox, UndeliveredDir, name)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // the task read it before it ended
		}
		return fmt.Errorf("message to task %s: whether it was read is unknown: %w", id, err)
	}
	return &NotDeliveredError{ID: id, Agent: t.Agent, Status: t.Status}
}

// Undelivered returns the steering messages a finished task never read,
// oldest first, without their "from:" line, and files any still in its
// inbox under UndeliveredDir. Only messages whose copy the sender kept
// (recordSent) count, each as its copy says: the child may write its
// inbox. A running (or unknown) task has none; ended
// says the caller saw the task's process end (its owner, whose lock keeps
// the task "running" until the result is verified).
func Undelivered(projectRoot, id string, ended bool) ([]string, error) {
	return undelivered(dispatch.Finder{ProjectRoot: projectRoot}, id, ended)
}

// undelivered is Undelivered of a task f finds.
func undelivered(f dispatch.Finder, id string, ended bool) ([]string, error) {
	projectRoot := f.ProjectRoot
	t, err := f.Load(id)
	if err != nil {
		return nil, err
	}
	if !ended && (t.Status == dispatch.StatusRunning || t.Status == dispatch.StatusQueued) {
		return nil, nil
	}
	td := t.Files()
	late := filepath.Join(taskdir.Inbox, UndeliveredDir)
	for _, name := range entries(td.File(taskdir.Inbox)) {
		if err := td.MkdirAll(late); err != nil {
			return nil, err
		}
		_ = td.Rename(filepath.Join(taskdir.Inbox, name), filepath.Join(late, name))
	}
	var msgs []string
	for _, name := range entries(td.File(late)) {
		b, ok := sentCopy(projectRoot, id, name)
		if !ok {
			continue // not one Send wrote: the child's
		}
		text := string(b)
		if _, rest, ok := strings.Cut(text, "\n"); ok && strings.HasPrefix(text, "from: ") {
			text = rest
		}
		msgs = append(msgs, text)
	}
	return msgs, nil
}

// entries lists the message files in dir in name (= time) order.
func entries(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// undeliveredNote is what a background task's end notice adds when
// steering messages sent to it were never read.
func (d *Dispatcher) undeliveredNote(id string) string {
	msgs, err := undelivered(d.finder(), id, true)
	if err != nil || len(msgs) == 0 {
		return ""
	}
	return fmt.Sprintf(" %d steering message(s) sent to it were not delivered: it ended first (resume it with Task resume_task_id=%q if they still matter).", len(msgs), id)
}
