package temporal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// A resumed plan's continuations (RunInput.Stopped, each call's From) are
// where the execution its resume read left the calls a cancel stopped. A
// worker signed each for its run, task and submitter (workerkey.go), but
// any execution of the run would do: whoever completes the workflow tasks
// of the resumed execution could hand a call another execution's
// conversation of the same task. So the resume pins them: it keeps only
// those signed in the execution it read, and signs, per task, that
// execution and the heartbeat's digest (Submission.Froms); a worker takes
// a plan call's From only when it is the one pinned for its task.

// fromPin is what a resume signs of one continuation: the execution its
// worker signed it in and the digest of the heartbeat as the resume read
// it ("": it hands on nothing, and needs no pin).
func fromPin(hb Heartbeat) string {
	if !carries(hb) {
		return ""
	}
	run := ""
	if hb.Signed != nil {
		run = hb.Signed.Run
	}
	hb.RefusedBy = nil // outside what a worker signs: any worker of the queue writes it
	b, _ := json.Marshal(hb)
	sum := sha256.Sum256(b)
	return run + " " + hex.EncodeToString(sum[:])
}

// readFroms keeps the continuations of stopped signed in execution read
// (and those no worker signed, which a worker with keys refuses anyway),
// and those signed in an earlier execution that the read one's own
// submission pinned (pins: the resume that started it signed them, and
// the call did not run in it): a call a cancel stopped twice continues,
// never starts over. Any other signed in another execution is dropped:
// its call starts over from its signed brief instead.
func readFroms(stopped map[string]Heartbeat, read string, pins map[string]string) map[string]Heartbeat {
	var kept map[string]Heartbeat
	for id, hb := range stopped {
		if carries(hb) && hb.Signed != nil && hb.Signed.Run != read && (pins[id] == "" || pins[id] != fromPin(hb)) {
			continue
		}
		if kept == nil {
			kept = map[string]Heartbeat{}
		}
		kept[id] = hb
	}
	return kept
}

// FromPins are the pins a run's submission signs for its continuations
// (Submission.Froms).
func FromPins(stopped map[string]Heartbeat) map[string]string {
	var pins map[string]string
	for id, hb := range stopped {
		if p := fromPin(hb); p != "" {
			if pins == nil {
				pins = map[string]string{}
			}
			pins[id] = p
		}
	}
	return pins
}

// pinned checks a plan call's continuation against the pins its signed
// submission carries: one that hands anything on must be the pinned one.
func (sub *Submission) pinned(from *Heartbeat) error {
	if from == nil || !carries(*from) {
		return nil
	}
	if p, ok := sub.Froms[from.TaskID]; !ok || p != fromPin(*from) {
		return unbound("the call's continuation of task %s is not the one its run's resume read and signed: a resumed call continues only from the execution its resume named", from.TaskID)
	}
	return nil
}

// pinsOf is the continuations a submission pinned (nil: none, or no
// submission).
func pinsOf(sub *Submission) map[string]string {
	if sub == nil {
		return nil
	}
	return sub.Froms
}

// uncheckedStops is the continuations stopped (the read execution's,
// after readFroms) that a resume of execution r may hand on (n: how many
// it dropped). A run with a worker set whose workflow did not check its
// stopped calls' heartbeats against the input it scheduled (no
// boundStopsVersion marker in r's replay: a run started, or run, by a
// brood from before it) may keep a heartbeat signed for a brief a
// completer made, and a resume would hand on that conversation and its
// partial change (review30 P2-1): every one that carries anything is
// dropped, so those calls start over from their brief. So is one an
// earlier execution left (signed in another than r) when r's start did
// not require the marker: an older submitter's resume carried it from an
// execution no one checked. A run without a worker set checks none of its
// workers' results either: kept as it is.
func uncheckedStops(stopped map[string]Heartbeat, r *runRead) (map[string]Heartbeat, int) {
	if r.start.Workers == nil {
		return stopped, 0
	}
	oldRun := r.versions[boundStopsVersion] < 1
	oldStart := r.start.Versions[boundStopsVersion] < 1
	var kept map[string]Heartbeat
	n := 0
	for id, hb := range stopped {
		if carries(hb) && (oldRun || oldStart && (hb.Signed == nil || hb.Signed.Run != r.exec)) {
			n++
			continue
		}
		if kept == nil {
			kept = map[string]Heartbeat{}
		}
		kept[id] = hb
	}
	return kept, n
}

// startOver is the resume's word for n stopped calls uncheckedStops
// dropped.
func startOver(n int) string {
	return fmt.Sprintf("%d stopped call(s) are from before brood checked stopped calls' briefs: they start over", n)
}
