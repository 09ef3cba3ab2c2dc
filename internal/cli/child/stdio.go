package child

import (
	"io"
	"sync"

	"github.com/broodhq/brood/internal/termsafe"
)

// Wrap makes each write to stdout and stderr whole under a lock (a child's
// goroutines write to both) and strips control sequences from stderr, as
// brood's Factory does (cmdutil.NewFactory); a nil Getenv reads nothing.
func Wrap(stdio IO) IO {
	if stdio.Getenv == nil {
		stdio.Getenv = func(string) string { return "" }
	}
	stdio.Out, stdio.Err = &lockedWriter{w: stdio.Out}, &lockedWriter{w: termsafe.NewWriter(stdio.Err)}
	return stdio
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
