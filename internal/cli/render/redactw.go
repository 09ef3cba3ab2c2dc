package render

import (
	"io"
	"sync"

	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// RedactWriter is w with redact applied to every write: the progress
// lines, tool names and inputs (`▸ Bash echo $TOKEN`), and notices that
// quote a child's or the model's words, which brood prints to the
// terminal (stderr) a line a write. Safe for the renderer's and the
// progress' goroutines at once. A nil redact is w itself.
func RedactWriter(w io.Writer, redact func(string) string) io.Writer {
	if redact == nil {
		return w
	}
	return &redactWriter{w: w, redact: redact}
}

type redactWriter struct {
	mu     sync.Mutex
	w      io.Writer
	redact func(string) string
}

func (rw *redactWriter) Write(p []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if _, err := io.WriteString(rw.w, rw.redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// firstLine is cmdutil.FirstLine of s redacted first with the redactor of
// w (a RedactWriter's): a line brood cuts short before it reaches w would
// otherwise leave a secret that straddles the cut unredactable there, its
// first characters shown (red team 21 P2-1). Every cut of text on its way
// to stderr goes through it.
func firstLine(w io.Writer, s string, n int) string {
	if rw, ok := w.(*redactWriter); ok {
		s = rw.redact(s)
	}
	return cmdutil.FirstLine(s, n)
}
