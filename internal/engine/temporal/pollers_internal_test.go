package temporal

import (
	"testing"
	"time"

	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
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
// a worker whose activity slots are all busy (it polls no activities for
// as long as its calls run) but whose workflow pollers poll is a worker
// with no free slot.
func TestQueuedWord(t *testing.T) {
	now := time.Date(2026, 12, 5, 16, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) []*taskqueuepb.PollerInfo {
		return []*taskqueuepb.PollerInfo{{LastAccessTime: timestamppb.New(now.Add(-ago))}}
	}
	none, free := "queued (no worker is polling task queue q)", "queued (waiting for a free worker on task queue q)"
	for _, tc := range []struct {
		name               string
		workflow, activity []*taskqueuepb.PollerInfo
		want               string
	}{
		{"no pollers", nil, nil, none},
		{"no activity poller ever", at(time.Second), nil, none},
		{"every worker stopped", at(5 * time.Minute), at(6 * time.Minute), none},
		{"a worker with every slot busy", at(10 * time.Second), at(30 * time.Minute), free},
		{"a worker polling both", at(time.Second), at(time.Second), free},
	} {
		if got := queuedWord("q", tc.workflow, tc.activity, now); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
