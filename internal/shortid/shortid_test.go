package shortid

import (
	"strings"
	"testing"
)

func TestPrefix(t *testing.T) {
	const (
		a = "01KBN5Q7MZ8XRTABCDEFGHJKMN" // siblings of the same millisecond
		b = "01KBN5Q7MZF0C2QWERTYZZZZZZ"
		c = "01KBN5Q7MZ8XRTQQQQQQQQQQQQ" // shares 14 characters with a
		d = "01KBN5Q9AB0000000000000000" // a later sibling: differs in the timestamp
	)
	for _, tc := range []struct {
		name   string
		id     string
		others []string
		want   string
	}{
		{"alone: the timestamp and six", a, nil, "01KBN5Q7MZ8XRTAB"},
		{"alone, itself among the others", a, []string{a}, "01KBN5Q7MZ8XRTAB"},
		{"same millisecond", a, []string{b}, "01KBN5Q7MZ8XRTAB"},
		{"the other of them", b, []string{a}, "01KBN5Q7MZF0C2QW"},
		{"sharing four past the timestamp", a, []string{b, c}, "01KBN5Q7MZ8XRTAB"},
		{"differing in the timestamp", d, []string{a}, "01KBN5Q9AB000"},
		{"sharing more than six past the timestamp", a, []string{"01KBN5Q7MZ8XRTABCDEFGHJKMP"}, "01KBN5Q7MZ8XRTABCDEFGHJKMN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Prefix(tc.id, tc.others)
			if got != tc.want {
				t.Errorf("Prefix = %q, want %q", got, tc.want)
			}
			for _, o := range tc.others {
				if o != tc.id && strings.HasPrefix(o, got) {
					t.Errorf("%q is not unique: %s has it", got, o)
				}
			}
		})
	}
}

// TestSiblingsNeverLookAlike: among ids of one millisecond, every shown
// prefix is unique and goes at least six characters past the timestamp.
func TestSiblingsNeverLookAlike(t *testing.T) {
	ids := []string{"01KBN5Q7MZ8XRTABCDEFGHJKMN", "01KBN5Q7MZ8XRTABCDEFGHJKMP", "01KBN5Q7MZ0000000000000000", "01KBN5Q7MZZZZZZZZZZZZZZZZZ"}
	var s Set
	for _, id := range ids {
		s.Add(id)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		p := s.Show(id)
		if len(p) < TimePart+Past || seen[p] {
			t.Errorf("%s shown as %q", id, p)
		}
		seen[p] = true
		if got, err := Match(p, ids); err != nil || got != id {
			t.Errorf("Match(%q) = %q, %v", p, got, err)
		}
	}
}

func TestMatch(t *testing.T) {
	ids := []string{"01KBN5Q7MZ8XRTABCDEFGHJKMN", "01KBN5Q7MZF0C2QWERTYZZZZZZ"}
	for _, tc := range []struct{ q, want, err string }{
		{"01KBN5Q7MZ8X", ids[0], ""},
		{"01kbn5q7mzf0", ids[1], ""},
		{"GHJKMN", ids[0], ""}, // a tail, as the TUI shows
		{"zzzzzz", ids[1], ""}, // a tail in any case
		{"01KBN5Q7MZ", "", "is ambiguous (2 tasks: "},
		{"NOPE", "", "no task NOPE"},
		{"", "", "no task id given"},
		{ids[1], ids[1], ""},
		{"01KBN5Q7MZ8X…", ids[0], ""},                      // a clipped id as a list prints it
		{"8XRTAB", ids[0], ""},                             // the tail of the shown prefix 01KBN5Q7MZ8XRTAB
		{"f0c2qw", ids[1], ""},                             // in any case
		{"XRTAB", "", "no task XRTAB"},                     // a part shorter than MinPart is not read
		{"8XRTABCDEX", "", "did you mean " + ids[0]},       // a typo: the close id is named
		{"5Q7MZ", "", "no task 5Q7MZ (no task id has it)"}, // shared by both: none named
	} {
		got, err := Match(tc.q, ids)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Match(%q) = %q, %v; want %q, %q", tc.q, got, err, tc.want, tc.err)
		}
	}
}

// TestResolveNamesKindAndCandidates: an ambiguous id names every candidate
// (up to five, then "…") and the kind of id asked for.
func TestResolveNamesKindAndCandidates(t *testing.T) {
	ids := []string{"01A0000000000000000000000A", "01A0000000000000000000000B", "01A0000000000000000000000C",
		"01A0000000000000000000000D", "01A0000000000000000000000E", "01A0000000000000000000000F"}
	_, err := Resolve("session", "01A", ids)
	if err == nil || !strings.Contains(err.Error(), "is ambiguous (6 sessions: ") || !strings.Contains(err.Error(), ids[4]+", …") || strings.Contains(err.Error(), ids[5]) {
		t.Errorf("ambiguous: %v", err)
	}
	if _, err := Resolve("workflow run", "XYZ", ids); err == nil || err.Error() != `no workflow run XYZ (no workflow run id has it)` {
		t.Errorf("none: %v", err)
	}
}
