package dispatch

import (
	"os"
	"testing"
	"time"
)

// TestFinishingOnlyWhereThePIDCanBeChecked (review prochide P3-3): a
// running task whose owner still holds it is said to be "finishing" when
// its recorded child is gone; a nested task's pid is recorded in its
// parent's PID namespace (the parent is init of one of its own), where
// this reader cannot check it: it is plain running, not "finishing" for
// its whole run (the pid there was a kernel thread here).
func TestFinishingOnlyWhereThePIDCanBeChecked(t *testing.T) {
	// This test process is no task's child: a pid that runs no task.
	for _, tc := range []struct {
		name  string
		pidns uint64
		note  string
	}{
		{"numbered in this namespace", OwnPIDNS(), "finishing"},
		{"an older record, no namespace", 0, "finishing"},
		{"numbered in another namespace", OwnPIDNS() + 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := &Task{ID: "01TESTFINISHING", owned: true, Log: &Log{PID: os.Getpid(), PIDNS: tc.pidns, Started: time.Now()}}
			task.lookAlive()
			task.judge(nil)
			if task.Status != StatusRunning || task.Note != tc.note {
				t.Errorf("listed %s (%q), want running (%q)", task.Status, task.Note, tc.note)
			}
		})
	}
}
