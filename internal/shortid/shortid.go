// Package shortid is the one rule for showing and reading task ids (ULIDs:
// ten characters of timestamp, sixteen of randomness) in a shorter form,
// for progress lines, the TUI and the CLI alike.
//
// Shown: the shortest prefix that tells an id apart from every other id
// shown beside it, and at least six characters past the timestamp part
// they share: siblings dispatched in the same millisecond never look alike
// ("01KBN5Q7MZ8XRTAB" and "01KBN5Q7MZF0C2QW", not "01KBN5Q7MZ…" twice). An
// id shown alone keeps its whole timestamp and six more.
//
// Read: any prefix or tail of an id, or any part of it of at least
// MinPart characters (the tail of a shown prefix is one), is accepted when
// exactly one id has it (Match).
package shortid

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

const (
	// TimePart is the length of a ULID's timestamp.
	TimePart = 10
	// Past is how many characters past the shared timestamp part are
	// always shown.
	Past = 6
	// MinPart is the fewest characters from the middle of an id that are
	// read as naming it (a prefix or a tail may be shorter).
	MinPart = 6
)

// Prefix returns the prefix of id shown beside others (id itself among
// them is ignored).
func Prefix(id string, others []string) string {
	shared, seen := 0, false
	for _, o := range others {
		if o == id {
			continue
		}
		seen = true
		shared = max(shared, commonPrefix(id, o))
	}
	n := shared + 1 // unique
	if !seen {
		n = TimePart + Past
	} else {
		n = max(n, min(shared, TimePart)+Past)
	}
	if n >= len(id) {
		return id
	}
	return id[:n]
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Set is the ids shown so far in one place (a run's progress lines, a
// listing); Show gives an id its prefix among them. Safe for concurrent
// use.
type Set struct {
	mu  sync.Mutex
	ids []string
}

// Add records id as shown here.
func (s *Set) Add(id string) {
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.ids, id) {
		s.ids = append(s.ids, id)
	}
}

// Show records id and returns its prefix among the ids of the set.
func (s *Set) Show(id string) string {
	s.Add(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	return Prefix(id, s.ids)
}

// Match returns the one task id of ids that q is, or is a prefix, a tail
// or a part of (Resolve of kind "task").
func Match(q string, ids []string) (string, error) {
	return Resolve("task", q, ids)
}

// Resolve is the one rule for reading an id the user typed: the id of ids
// that q is, or is a prefix, a tail or a part of at least MinPart
// characters of (so the tail of a shown prefix names its id), in any case,
// with a trailing "…" (as a clipped id is printed) ignored. It fails when
// none is, naming the id q is closest to if one stands out, or when
// several are (it names up to five of them). kind names what the ids are
// ("task", "session", "workflow run").
func Resolve(kind, q string, ids []string) (string, error) {
	typed := strings.TrimSuffix(strings.TrimSpace(q), "…")
	q = strings.ToUpper(typed)
	if q == "" {
		return "", fmt.Errorf("no %s id given", kind)
	}
	var hits []string
	for _, id := range ids {
		u := strings.ToUpper(id)
		if u == q {
			return id, nil
		}
		if strings.HasPrefix(u, q) || strings.HasSuffix(u, q) ||
			(len(q) >= MinPart && strings.Contains(u, q)) {
			hits = append(hits, id)
		}
	}
	switch len(hits) {
	case 0:
		if near := Closest(typed, ids); near != "" {
			return "", fmt.Errorf("no %s %s (no %s id has it; did you mean %s?)", kind, typed, kind, near)
		}
		return "", fmt.Errorf("no %s %s (no %s id has it)", kind, typed, kind)
	case 1:
		return hits[0], nil
	}
	shown := hits[:min(len(hits), 5)]
	more := ""
	if len(hits) > len(shown) {
		more = ", …"
	}
	return "", ambiguousError(fmt.Sprintf("%s id %s is ambiguous (%d %ss: %s%s): give more of it", kind, typed, len(hits), kind, strings.Join(shown, ", "), more))
}

// Closest is the one id of ids that shares the longest run of characters
// with q (in any case), more than MinPart of them; "" when none does or
// several tie (ids of one day share most of their timestamp part). It is
// what an id no id has is suggested as.
func Closest(q string, ids []string) string {
	q = strings.ToUpper(strings.TrimSuffix(strings.TrimSpace(q), "…"))
	best, bestN, tie := "", 0, false
	for _, id := range ids {
		n := longestCommon(q, strings.ToUpper(id))
		switch {
		case n > bestN:
			best, bestN, tie = id, n, false
		case n == bestN:
			tie = true
		}
	}
	if tie || bestN <= MinPart {
		return ""
	}
	return best
}

// longestCommon is the length of the longest string both a and b contain.
func longestCommon(a, b string) int {
	best := 0
	for i := range a {
		for j := range b {
			n := 0
			for i+n < len(a) && j+n < len(b) && a[i+n] == b[j+n] {
				n++
			}
			best = max(best, n)
		}
	}
	return best
}

// ErrAmbiguous is what Resolve's error is when several ids match
// (errors.Is): the id exists, the user must give more of it.
var ErrAmbiguous = errors.New("ambiguous id")

type ambiguousError string

func (e ambiguousError) Error() string        { return string(e) }
func (e ambiguousError) Is(target error) bool { return target == ErrAmbiguous }
