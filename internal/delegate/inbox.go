package delegate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

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
func settle(projectRoot, id, name string) error {
	t, err := dispatch.LoadTask(projectRoot, id)
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
// inbox under UndeliveredDir. A running (or unknown) task has none; ended
// says the caller saw the task's process end (its owner, whose lock keeps
// the task "running" until the result is verified).
func Undelivered(projectRoot, id string, ended bool) ([]string, error) {
	t, err := dispatch.LoadTask(projectRoot, id)
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
		b, err := td.ReadFile(filepath.Join(late, name), maxSteer)
		if err != nil {
			continue // not a plain file: not one Send wrote
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
	msgs, err := Undelivered(d.ProjectRoot(), id, true)
	if err != nil || len(msgs) == 0 {
		return ""
	}
	return fmt.Sprintf(" %d steering message(s) sent to it were not delivered: it ended first (resume it with Task resume_task_id=%q if they still matter).", len(msgs), id)
}
