package render

import (
	"io"
	"sync"
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
