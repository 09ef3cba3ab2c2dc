package temporal

import "testing"

// TestNamedRecordNeverSkipsAFollowUp: a retry of a follow-up whose named
// record is the earlier run's transcript (the follow-up's own heartbeat
// copied under the answer's name: review44 P1-1) continues from its resume
// point and sends the follow-up; a named record past it (the follow-up
// asked and answered) or of a call with no follow-up is taken.
func TestNamedRecordNeverSkipsAFollowUp(t *testing.T) {
	from := Heartbeat{Transcript: Ref{Key: "sha256/aa/from", Size: 10, SHA256: "aa"}}
	after := Heartbeat{Transcript: Ref{Key: "sha256/bb/after", Size: 20, SHA256: "bb"}}
	for _, tc := range []struct {
		name     string
		followUp bool
		named    Heartbeat
		want     bool
	}{
		{"the follow-up's own heartbeat under the name", true, from, false},
		{"a follow-up answered", true, after, true},
		{"no follow-up", false, from, true},
	} {
		if got := takesNamed(from, tc.followUp, tc.named); got != tc.want {
			t.Errorf("%s: takesNamed = %v, want %v", tc.name, got, tc.want)
		}
	}
}
