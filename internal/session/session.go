// Package session stores an agent's transcript as JSON lines: one record per
// message, tool call, tool result, usage report and steering message,
// appended as the run goes. A crash at any moment leaves a valid prefix
// (every record is one write of one line, and a torn last line is ignored on
// replay), so a transcript can always be continued. This package knows
// nothing of processes, tools or providers beyond the model message types.
package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/model"
)

// RecordType names a transcript record.
type RecordType string

const (
	RecMeta       RecordType = "meta"        // start of a run: agent, model, system prompt
	RecMessage    RecordType = "message"     // one conversation message, as sent to the model
	RecToolCall   RecordType = "tool_call"   // a tool call about to run
	RecToolResult RecordType = "tool_result" // one tool call's result, as soon as it is known; with input when a hook replaced the model's: the input that ran
	RecUsage      RecordType = "usage"       // tokens of one model turn
	RecSteer      RecordType = "steer"       // a message injected from outside at a turn boundary
	RecNote       RecordType = "note"        // a one-line notice about the run (a tool it was not offered, and why)
	RecEnd        RecordType = "end"         // a run finished (status, turns)
)

// Record is one line of a transcript.
type Record struct {
	Type    RecordType      `json:"type"`
	Time    time.Time       `json:"time"`
	Turn    int             `json:"turn,omitempty"`
	Agent   string          `json:"agent,omitempty"`
	Model   string          `json:"model,omitempty"`
	System  string          `json:"system,omitempty"`
	Message *model.Message  `json:"message,omitempty"`
	ToolID  string          `json:"tool_id,omitempty"`
	Tool    string          `json:"tool,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	Output  string          `json:"output,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	// Refused: brood refused the call (tool.Result.Refused); it never ran.
	Refused bool         `json:"refused,omitempty"`
	Usage   *model.Usage `json:"usage,omitempty"`
	Text    string       `json:"text,omitempty"`
	Status  string       `json:"status,omitempty"`
}

// Writer appends records to a transcript file. It is safe for concurrent use
// (parallel tool calls report their results from several goroutines).
type Writer struct {
	mu     sync.Mutex
	f      *os.File // nil before a new session's first line (claim)
	closed bool
	path   string
	now    func() time.Time
	redact func(string) string
	err    error // the first failed write
	// first: the file was empty when opened, so the next line written is
	// its first, which is sealed into its owner record (claimFirst, or
	// claim's one write).
	first bool
	// claim is the new session's owner record, written with the first
	// line, before the transcript is made with it (Options.Claim).
	claim *Pending
}

// Options tune a Writer.
type Options struct {
	// Redact, when set, is applied to every text that goes to disk, so that
	// secrets from the environment never land in a transcript.
	Redact func(string) string
	// Now overrides the clock (tests).
	Now func() time.Time
	// Claim, when set, is the new session's owner record (ClaimLater),
	// written once, with the hash of the transcript's first line, just
	// before the transcript is made with that line in it (not at Open: a
	// kill before the first line leaves neither); Close waits for its
	// sync. The transcript must not exist yet.
	Claim *Pending
}

// Open opens path for appending, creating it (and its directory) if needed;
// with Options.Claim, the file is made with its first line.
func Open(path string, opts Options) (*Writer, error) {
	// Readable by its owner alone: a transcript holds what the model read.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	w := &Writer{path: path, now: opts.Now, redact: opts.Redact, claim: opts.Claim}
	if w.now == nil {
		w.now = time.Now
	}
	if w.claim != nil {
		w.first = true
		return w, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	w.f = f
	if err := w.healTornTail(); err != nil {
		f.Close()
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		w.first = true
	}
	return w, nil
}

// healTornTail makes sure the file ends in a newline, so that a record
// appended after a crash that tore the last line starts on a line of its own.
func (w *Writer) healTornTail() error {
	st, err := w.f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	r, err := os.Open(w.path)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer r.Close()
	b := make([]byte, 1)
	if _, err := r.ReadAt(b, st.Size()-1); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	if b[0] != '\n' {
		_, err = w.f.Write([]byte("\n"))
	}
	return err
}

// Path is the file the writer appends to.
func (w *Writer) Path() string { return w.path }

// Append writes one record as one line. The time is filled in if zero.
func (w *Writer) Append(r Record) error {
	if r.Time.IsZero() {
		r.Time = w.now().UTC()
	}
	if w.redact != nil {
		r = redactRecord(r, w.redact)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("session: encode %s record: %w", r.Type, err)
	}
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("session: writer is closed")
	}
	if w.f == nil {
		// A new session's first line (Options.Claim); after its owner
		// record failed, nothing is written (Err says why).
		if w.err == nil {
			w.err = w.begin(line)
		}
		return w.err
	}
	// One write per line: a kill between two records never leaves half of one
	// interleaved with the next.
	if _, err = w.f.Write(line); err != nil {
		err = fmt.Errorf("session: %w", err) // names the file
		if w.err == nil {
			w.err = err
		}
	} else if w.first {
		w.first = false
		if w.claim == nil {
			claimFirst(w.path, line)
		}
	}
	return err
}

// begin writes a new session's owner record, sealed with line's hash
// (none for nil), then makes the transcript with line in it: written
// beside it and linked into place, so no process, nor a kill at any
// moment, sees the transcript without its first line or without its
// record (a record alone is not listed: it names no transcript yet).
func (w *Writer) begin(line []byte) error {
	if err := w.claim.write(line); err != nil {
		return err
	}
	f, err := createWith(w.path, line)
	if err != nil {
		return claimError{fmt.Sprintf("session transcript %s: %v; not started: remove what is in its place or make %s writable, then run again", w.path, err, filepath.Dir(w.path))}
	}
	w.f, w.first = f, false
	return nil
}

// createWith makes the file path holding data, opened for appending; a
// file already there is left as it was (an error).
func createWith(path string, data []byte) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name()) // once linked, its second name
	if _, err = f.Write(data); err == nil {
		// Appending, as Open's: another writer's lines are never overwritten.
		_, err = unix.FcntlInt(f.Fd(), unix.F_SETFL, unix.O_APPEND)
	}
	if err == nil {
		err = os.Link(f.Name(), path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Err is the first write that failed (a full disk), or nil: a transcript
// with a gap must not pass for a whole one.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	if w.f == nil && w.claim != nil && w.err == nil {
		// A session that wrote no line still gets its record (as Claim
		// wrote it), without a first line's hash, and its empty
		// transcript, so the id said for it can be resumed.
		err = w.begin(nil)
	}
	if w.f != nil {
		err = errors.Join(err, w.f.Close())
		w.f = nil
	}
	if w.claim != nil {
		err = errors.Join(err, w.claim.wait())
	}
	return err
}

func redactRecord(r Record, f func(string) string) Record {
	r.Output = f(r.Output)
	r.Text = f(r.Text)
	r.System = f(r.System)
	if len(r.Input) > 0 {
		r.Input = redactJSON(r.Input, f)
	}
	if r.Message != nil {
		m := *r.Message
		m.Content = append([]model.Part(nil), m.Content...)
		m.Content = slices.DeleteFunc(m.Content, func(p model.Part) bool {
			// Signed reasoning goes back byte for byte or not at all (the
			// provider refuses an edited one): with a secret in it, it is
			// left out of the transcript rather than redacted.
			return p.Type == model.PartThinking && f(p.Text) != p.Text
		})
		for i := range m.Content {
			if m.Content[i].Type == model.PartThinking {
				continue
			}
			m.Content[i].Text = f(m.Content[i].Text)
			if len(m.Content[i].Input) > 0 {
				m.Content[i].Input = redactJSON(m.Content[i].Input, f)
			}
			if raw := m.Content[i].Raw; len(raw) > 0 {
				// A provider's block kept verbatim (a web search, cited
				// text) is redacted like the rest; cited text whose block
				// had a secret goes back as plain (redacted) text.
				m.Content[i].Raw = redactJSON(raw, f)
				if m.Content[i].Type == model.PartText && !bytes.Equal(m.Content[i].Raw, raw) {
					m.Content[i].Raw = nil
				}
			}
		}
		r.Message = &m
	}
	return r
}

// redactJSON redacts the strings inside a JSON value. It works on the
// decoded strings, so a secret that JSON escapes (a quote, a backslash) is
// still found; when nothing changes, the bytes are kept exactly as they were.
func redactJSON(raw json.RawMessage, f func(string) string) json.RawMessage {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return json.RawMessage(f(string(raw)))
	}
	changed := false
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case string:
			if r := f(t); r != t {
				changed = true
				return r
			}
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		}
		return x
	}
	v = walk(v)
	if !changed {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(f(string(raw)))
	}
	return b
}

// Read parses every complete record of a transcript. A torn or garbled line
// (the trace of a crash) is skipped, and reported in the second result as a
// count, never as an error: the prefix before it is still good.
func Read(rd io.Reader) ([]Record, int, error) {
	var recs []Record
	bad := 0
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 4<<10), 256*1024*1024) // grown as a line needs
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil || r.Type == "" {
			bad++
			continue
		}
		recs = append(recs, r)
	}
	return recs, bad, sc.Err()
}

// ReadFile is Read on a file.
// The file is opened without following a link and without blocking (a
// child can put a FIFO where its transcript was), and must be a regular
// file.
func ReadFile(path string) ([]Record, int, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("session: %s is not a regular file (brood never made it: a child or the repository did); not read", path)
	}
	return Read(f)
}
