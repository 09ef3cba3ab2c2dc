package childrun

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/broodhq/brood/internal/protocol"
)

// sent collects the progress lines a batch sends.
type sent struct {
	mu    sync.Mutex
	lines []string
}

func (s *sent) send(m protocol.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, strings.Join(m.(protocol.Progress).Tools, ","))
}

func (s *sent) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lines)
}

// TestToolBatch: names go five at a time across turns; a batch not full is
// sent a second after its first name, not before; the end of the run
// sends what is left.
func TestToolBatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls []time.Duration // the pause before each call
		end   time.Duration   // the pause before the run ends
		want  []string
	}{
		{"one call per quick turn: one line per five", []time.Duration{0, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}, 0,
			[]string{"T0,T1,T2,T3,T4", "T5,T6"}},
		{"a slow turn: flushed a second after the first name", []time.Duration{0, 300 * time.Millisecond, 800 * time.Millisecond}, 5 * time.Second,
			[]string{"T0,T1", "T2"}},
		{"twelve calls at once", make([]time.Duration, 12), 0, []string{"T0,T1,T2,T3,T4", "T5,T6,T7,T8,T9", "T10,T11"}},
		{"nothing called", nil, time.Second, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var s sent
				b := newToolBatch(s.send)
				for i, d := range tc.calls {
					time.Sleep(d)
					b.add(fmt.Sprintf("T%d", i))
				}
				time.Sleep(tc.end)
				synctest.Wait()
				b.flush()
				if got := s.get(); !slices.Equal(got, tc.want) {
					t.Errorf("sent %q, want %q", got, tc.want)
				}
			})
		})
	}
}

// TestToolBatchDeadline: a lone name waits just under a second, and is
// sent at the second.
func TestToolBatchDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s sent
		b := newToolBatch(s.send)
		b.add("Read")
		time.Sleep(progressFlush - time.Millisecond)
		synctest.Wait()
		if got := s.get(); len(got) != 0 {
			t.Fatalf("sent %q before the second was up", got)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if got := s.get(); !slices.Equal(got, []string{"Read"}) {
			t.Fatalf("sent %q at the second, want [Read]", got)
		}
		b.add("Grep") // a new batch, a new deadline
		time.Sleep(progressFlush)
		synctest.Wait()
		if got := s.get(); !slices.Equal(got, []string{"Read", "Grep"}) {
			t.Fatalf("sent %q", got)
		}
	})
}
