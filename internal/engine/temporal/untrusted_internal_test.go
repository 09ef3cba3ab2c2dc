package temporal

import (
	"slices"
	"strings"
	"testing"
)

// TestRefusersList: the workers an untrusted refusal names come from the
// heartbeat details any worker of the queue writes: each once, printable,
// bounded, this worker last.
func TestRefusersList(t *testing.T) {
	many := []string{}
	for i := range 20 {
		many = append(many, "w"+strings.Repeat("x", i))
	}
	for _, tc := range []struct {
		name   string
		before []string
		self   string
		want   []string
	}{
		{"first", nil, "me", []string{"me"}},
		{"again", []string{"a", "me"}, "me", []string{"a", "me"}},
		{"control bytes", []string{"a\x1b[2Jb\n"}, "me", []string{"a[2Jb", "me"}},
		{"long", []string{strings.Repeat("y", 500)}, "me", []string{strings.Repeat("y", maxWorkerName), "me"}},
		{"many", many, "me", append(slices.Clone(many[:maxRefusers-1]), "me")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := refusers(tc.before, tc.self); !slices.Equal(got, tc.want) {
				t.Fatalf("refusers(%q, %q) = %q; want %q", tc.before, tc.self, got, tc.want)
			}
		})
	}
}
