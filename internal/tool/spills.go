package tool

import (
	"os"
	"sync"

	"github.com/broodhq/brood/internal/limits"
)

// Spills is what an agent's commands keep on disk of their spilled output,
// together: each command's file takes at most spillCap, and all of them at
// most the limit (a child's limits.output), so a command that floods its
// output cannot fill the disk however often it runs. Cleanup removes them
// when the run ends. A nil *Spills bounds each command by spillCap alone
// and keeps the files.
type Spills struct {
	mu    sync.Mutex
	limit int64
	used  int64 // reserved or written
	files []string
}

// NewSpills bounds an agent's spilled output to limit bytes on disk
// (limits.Unlimited or 0: no bound over all commands).
func NewSpills(limit int64) *Spills { return &Spills{limit: limit} }

// reserve takes up to want bytes of the budget for one command's file.
func (s *Spills) reserve(want int64) int64 {
	if s == nil || s.limit <= 0 {
		return want
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := max(0, min(want, s.limit-s.used))
	s.used += n
	return n
}

// settle gives back what a file reserved and did not use, and records the
// file (name "" for none).
func (s *Spills) settle(reserved, size int64, name string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit > 0 {
		s.used -= reserved - min(size, reserved)
	}
	if name != "" {
		s.files = append(s.files, name)
	}
}

// Used is the bytes of spilled output on disk (or reserved by a running
// command).
func (s *Spills) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// Cleanup removes every file the agent's commands spilled: the run is over
// and no one will Read them again.
func (s *Spills) Cleanup() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		_ = os.Remove(f)
	}
	s.files = nil
	s.used = 0
}

// String says the bound, for a note.
func (s *Spills) String() string {
	if s == nil || s.limit <= 0 {
		return "unbounded"
	}
	return limits.Size(s.limit)
}
