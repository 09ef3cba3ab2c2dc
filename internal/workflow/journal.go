package workflow

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/broodhq/brood/internal/model"
)

// JournalFile is the journal of a run in its directory.
const JournalFile = "journal.jsonl"

// JournalLine is one record of a journal file: a call's start or end.
type JournalLine struct {
	Type   string      `json:"t"` // start | done
	Key    string      `json:"key"`
	TaskID string      `json:"task_id,omitempty"`
	Rec    *CallRecord `json:"rec,omitempty"`
}

// FileJournal is a journal kept as an append-only JSON-lines file, synced
// after every record, so a run killed at any moment loses at most the line
// being written (a torn last line is skipped when it is read back).
type FileJournal struct {
	mu      sync.Mutex
	f       *os.File
	entries map[string]Entry
	started int
	spent   model.Usage
	// lines is the whole journal of one kept in memory (f == nil).
	lines []JournalLine
	// redact scrubs secrets from the lines written to the file (Redacting).
	redact func(string) string
}

// Redacting makes j write its lines with redact applied to their texts
// (a call's output can copy an input that held a secret); what j holds
// in memory is as given. It returns j.
func (j *FileJournal) Redacting(redact func(string) string) *FileJournal {
	j.redact = redact
	return j
}

// MemoryJournal is a journal kept in memory, seeded with the lines of an
// earlier run: a durable engine keeps it in its own history (the Temporal
// engine passes it from one execution of a run to the next). It never
// touches a file; Lines gives it back.
func MemoryJournal(lines []JournalLine) *FileJournal {
	j := &FileJournal{entries: map[string]Entry{}}
	for _, l := range lines {
		j.apply(l)
	}
	j.lines = append([]JournalLine(nil), lines...)
	return j
}

// Lines is what a MemoryJournal holds.
func (j *FileJournal) Lines() []JournalLine {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]JournalLine(nil), j.lines...)
}

// OpenJournal opens (or creates) the journal in dir and reads what it holds.
func OpenJournal(dir string) (*FileJournal, error) {
	path := filepath.Join(dir, JournalFile)
	j := &FileJournal{entries: map[string]Entry{}}
	lines, err := ReadJournal(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, l := range lines {
		j.apply(l)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	if err := healTail(f, path); err != nil {
		f.Close()
		return nil, err
	}
	j.f = f
	return j, nil
}

// healTail ends a torn last line, so the next record starts on its own.
func healTail(f *os.File, path string) error {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 || b[len(b)-1] == '\n' {
		return err
	}
	_, err = f.Write([]byte("\n"))
	return err
}

func (j *FileJournal) apply(l JournalLine) {
	e := j.entries[l.Key]
	switch l.Type {
	case "start":
		if e.TaskID == "" {
			j.started++
		}
		e.TaskID, e.Done = l.TaskID, nil
	case "done":
		if e.TaskID == "" && l.Rec != nil && l.Rec.TaskID != "" {
			e.TaskID = l.Rec.TaskID
		}
		if l.Rec != nil {
			var before model.Usage
			if e.Done != nil {
				before = e.Done.Usage
			}
			j.spent = j.spent.Add(usageSince(l.Rec.Usage, before))
		}
		e.Done = l.Rec
	}
	j.entries[l.Key] = e
}

// ReadJournal reads a journal file, skipping torn or garbled lines.
func ReadJournal(path string) ([]JournalLine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []JournalLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var l JournalLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Key != "" {
			out = append(out, l)
		}
	}
	return out, nil
}

// Lookup implements Journal.
func (j *FileJournal) Lookup(key string) (Entry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.entries[key]
	return e, ok
}

// Count implements Journal.
func (j *FileJournal) Count() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.started
}

// Spent implements Journal.
func (j *FileJournal) Spent() model.Usage {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.spent
}

// Started implements Journal.
func (j *FileJournal) Started(key, taskID string) error {
	return j.write(JournalLine{Type: "start", Key: key, TaskID: taskID})
}

// Finished implements Journal.
func (j *FileJournal) Finished(key string, rec CallRecord) error {
	return j.write(JournalLine{Type: "done", Key: key, Rec: &rec})
}

func (j *FileJournal) write(l JournalLine) error {
	b, err := json.Marshal(redactLine(l, j.redact))
	if err != nil {
		return err
	}
	j.mu.Lock()
	if j.f == nil {
		j.lines = append(j.lines, l)
		j.apply(l)
		j.mu.Unlock()
		return nil
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		j.mu.Unlock()
		return fmt.Errorf("journal: %w", err)
	}
	j.apply(l)
	j.mu.Unlock()
	// Synced outside the lock: calls finishing together share one flush
	// (the kernel writes every line appended so far), and none returns
	// before its own line is on disk.
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// Close closes the file.
func (j *FileJournal) Close() error {
	if j.f == nil {
		return nil
	}
	return j.f.Close()
}

// Summary counts a journal's calls: started, finished with a result,
// finished without one (cancelled ones, which a resume continues, are in
// neither), and still open.
func Summary(lines []JournalLine) (started, done, failed, open int) {
	j := &FileJournal{entries: map[string]Entry{}}
	for _, l := range lines {
		j.apply(l)
	}
	for _, e := range j.entries {
		switch {
		case e.Done == nil:
			open++
		case e.Done.Output != nil:
			done++
		case e.Done.Status != CallCancelled:
			failed++
		}
	}
	return j.started, done, failed, open
}

// CallStatuses counts a finished run's calls by status as Statuses counts
// its journal: only the calls that started (a task id), so a call skipped
// or cancelled before it began counts in neither. An engine whose run
// leaves no journal to read says the same of it.
func CallStatuses(res *Result) map[string]int {
	out := map[string]int{}
	for _, ph := range res.Phases {
		for _, c := range ph.Calls {
			if c.TaskID != "" {
				out[c.Status]++
			}
		}
	}
	return out
}

// Statuses counts a journal's calls by their last status; a call that
// started and has no end yet is "running" (or, once its run is over,
// stopped with it: listings say which).
func Statuses(lines []JournalLine) map[string]int {
	j := &FileJournal{entries: map[string]Entry{}}
	for _, l := range lines {
		j.apply(l)
	}
	out := map[string]int{}
	for _, e := range j.entries {
		if e.Done == nil {
			out["running"]++
			continue
		}
		out[e.Done.Status]++
	}
	return out
}
