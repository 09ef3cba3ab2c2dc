package temporal

import (
	"testing"
	"time"

	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"google.golang.org/protobuf/types/known/timestamppb"

	wf "github.com/broodhq/brood/internal/workflow"
)

// TestLivePollers: a worker is counted as polling only while its last poll
// is recent; the server's list keeps a stopped worker for minutes, and a
// queue whose workers all stopped said "waiting for a free worker" (and a
// plan not yet started said running) for as long.
func TestLivePollers(t *testing.T) {
	now := time.Date(2026, 12, 5, 16, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *taskqueuepb.PollerInfo {
		return &taskqueuepb.PollerInfo{LastAccessTime: timestamppb.New(now.Add(-ago))}
	}
	for _, tc := range []struct {
		name    string
		pollers []*taskqueuepb.PollerInfo
		want    int
	}{
		{"none", nil, 0},
		{"one in a long poll", []*taskqueuepb.PollerInfo{at(59 * time.Second)}, 1},
		{"one stopped minutes ago", []*taskqueuepb.PollerInfo{at(5 * time.Minute)}, 0},
		{"one of each", []*taskqueuepb.PollerInfo{at(5 * time.Minute), at(time.Second)}, 1},
		{"no time given", []*taskqueuepb.PollerInfo{{}}, 1},
	} {
		if got := livePollers(tc.pollers, now); got != tc.want {
			t.Errorf("%s: %d live pollers, want %d", tc.name, got, tc.want)
		}
	}
}

// TestQueuedWord: every worker stopped minutes ago is no worker polling;
// otherwise the status says what is known, when a worker last polled and
// which, never that a worker is free or even there: a worker whose
// activity slots are all busy polls no activities but its workflow
// pollers go on, and one stopped seconds ago is listed still (F8).
func TestQueuedWord(t *testing.T) {
	now := time.Date(2026, 12, 5, 16, 0, 0, 0, time.UTC)
	at := func(ago time.Duration, who string) []*taskqueuepb.PollerInfo {
		return []*taskqueuepb.PollerInfo{{LastAccessTime: timestamppb.New(now.Add(-ago)), Identity: who}}
	}
	none := "queued (no worker is polling task queue q)"
	for _, tc := range []struct {
		name               string
		workflow, activity []*taskqueuepb.PollerInfo
		want               string
	}{
		{"no pollers", nil, nil, none},
		{"no activity poller ever", at(time.Second, "w1"), nil, none},
		{"every worker stopped", at(5*time.Minute, "w1"), at(6*time.Minute, "w1"), none},
		{"a worker with every slot busy", at(10*time.Second, "w1"), at(30*time.Minute, "w1"), "queued (waiting for a worker: last poll of task queue q 10s ago by w1)"},
		{"a worker stopped seconds ago", at(17*time.Second, "w2"), at(18*time.Second, "w2"), "queued (waiting for a worker: last poll of task queue q 17s ago by w2)"},
		{"no time given", []*taskqueuepb.PollerInfo{{}}, []*taskqueuepb.PollerInfo{{}}, "queued (waiting for a worker on task queue q)"},
	} {
		if got := queuedWord("q", tc.workflow, tc.activity, now); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// Progress says a wait once, not again as its last poll grows older.
	a, b := wf.Event{Status: "queued (waiting for a worker: last poll of task queue q 3s ago by w)"}, wf.Event{Status: "queued (waiting for a worker: last poll of task queue q 1m4s ago by w)"}
	if !sameNews(a, b) || sameNews(a, wf.Event{Status: none}) {
		t.Errorf("sameNews: a poll's age is news, or another wait is not")
	}
}
