package tool

import "strings"

// minStreamHold is the least a Stream holds back, whatever the literal
// secrets' lengths: enough for any key format's prefix and the tail that
// makes it one (AIza + 35, github_pat_ + 22), so that a key streamed in
// pieces is whole before any of it goes out.
const minStreamHold = 64

// Stream redacts a text that arrives in pieces (a model's text deltas)
// and goes out in pieces: each piece given to Push returns what of the
// text so far is settled, redacted as the whole text will be, and holds
// back the rest — a tail long enough to hold any secret's start (the
// longest secret's length − 1) and any secret or key that would cross
// the cut — until more comes or Flush. Without it each piece would be
// redacted alone, and a secret split between two pieces would go out in
// its parts (red team 21 P2-9). Not safe for concurrent use.
type Stream struct {
	r       *Redactor
	pending string
}

// Stream is a new Stream of r's (a nil r passes the text as it comes).
func (r *Redactor) Stream() *Stream { return &Stream{r: r} }

// Push adds piece and returns the settled, redacted text ("" if none).
func (s *Stream) Push(piece string) string {
	if s.r == nil {
		return piece
	}
	s.pending += piece
	hold := max(s.r.maxLen()-1, minStreamHold)
	cut := len(s.pending) - hold
	if cut <= 0 {
		return ""
	}
	if i := strings.LastIndex(s.pending[:cut], "-----BEGIN"); i >= 0 && !strings.Contains(s.pending[i:], "-----END") && len(s.pending)-i < maxPendingKey {
		cut = i // a private key block not finished yet
	}
	whole := s.r.Redact(s.pending)
	for ; cut > 0; cut-- {
		if !utf8Start(s.pending[cut]) {
			continue // inside a character
		}
		head := s.r.Redact(s.pending[:cut])
		if strings.HasPrefix(whole, head) && head+s.r.Redact(s.pending[cut:]) == whole {
			break // no secret crosses the cut
		}
	}
	if cut <= 0 {
		return ""
	}
	out := s.r.Redact(s.pending[:cut])
	s.pending = s.pending[cut:]
	return out
}

// Flush returns what is held back, redacted, and empties the stream.
func (s *Stream) Flush() string {
	p := s.pending
	s.pending = ""
	if s.r == nil {
		return p
	}
	return s.r.Redact(p)
}
