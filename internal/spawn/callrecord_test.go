package spawn

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/protocol"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestCallRecordTakesOnlyWhatFits: the parent's record of a child's calls
// takes a start only in its place and an end only of a call started and
// not ended; the rest is said once as a gap. A call that never ended is
// no success for the guards. A resume's record keeps the earlier runs'
// calls and replaces a run judged again.
func TestCallRecordTakesOnlyWhatFits(t *testing.T) {
	root := t.TempDir()
	recs := taskdir.Open(root).Records()
	id := taskdir.NewID()
	d := &Dispatcher{cfg: Config{ProjectRoot: root, Owners: &recs}}
	j := &job{env: &dispatch.Envelope{TaskID: id}}

	run := &callLog{}
	for _, m := range []protocol.ToolCall{
		{Seq: 1, Tool: "Bash", Command: "go test ./..."},
		{Seq: 3, Tool: "Bash", Command: "forged: out of order"},
		{Seq: 1, Tool: "Bash", Ended: true, IsError: true, Output: "FAIL"},
		{Seq: 1, Tool: "Bash", Ended: true, Output: "ok  \tx\t0.1s"}, // ended twice
		{Seq: 9, Tool: "Bash", Ended: true},                          // never started
		{Seq: 2, Tool: "Bash", Command: "sleep 100"},                 // never ends
	} {
		run.add(m)
	}
	calls, _ := d.recordCalls(j, run)
	if len(calls) != 2 || calls[0].Command != "go test ./..." || !calls[0].IsError || calls[0].Result != "FAIL" {
		t.Fatalf("calls %+v; want the failed go test, then the call that never ended", calls)
	}
	if !calls[1].IsError {
		t.Errorf("a call that never ended counts as a success: %+v", calls[1])
	}
	var rec dispatch.Calls
	if err := recs.ReadCalls(id, &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Calls) != 2 || len(rec.Gaps) != 2 || !strings.Contains(rec.Gaps[0], "out of its place") || !strings.Contains(rec.Gaps[1], "never started, or ended twice") {
		t.Fatalf("record %+v; want two calls and two gaps", rec)
	}

	// The first resume: its calls come after the first run's.
	j.env.ResumeCount = 1
	run = &callLog{run: 1}
	run.add(protocol.ToolCall{Seq: 1, Tool: "Bash", Command: "go test ./..."})
	run.add(protocol.ToolCall{Seq: 1, Tool: "Bash", Ended: true, Output: "ok  \tx\t0.1s"})
	if calls, _ = d.recordCalls(j, run); len(calls) != 3 || calls[2].IsError {
		t.Fatalf("after a resume: calls %+v; want the first run's two and the passing run", calls)
	}
	// The same run judged again replaces its calls, never adds them twice.
	if calls, _ = d.recordCalls(j, run); len(calls) != 3 {
		t.Fatalf("the same run recorded twice: %+v", calls)
	}
	if err := recs.ReadCalls(id, &rec); err != nil || len(rec.Runs) != 2 || rec.Runs[0] != 0 || rec.Runs[1] != 1 {
		t.Fatalf("runs %v (%v); want [0 1]", rec.Runs, err)
	}
}

// TestCallRecordSaysWhenTheKernelCannotHoldIt: without Landlock (here
// turned off: isolation.no_landlock) a child's tools could reach the
// parent's end of the protocol pipe, and the result says the record of its
// calls is as good as the child's word; a child without Bash or MCP
// servers starts no tool process, and nothing is said.
func TestCallRecordSaysWhenTheKernelCannotHoldIt(t *testing.T) {
	root := t.TempDir()
	recs := taskdir.Open(root).Records()
	d := &Dispatcher{cfg: Config{ProjectRoot: root, Owners: &recs}}
	for _, tc := range []struct {
		tools []string
		said  bool
	}{{[]string{"Read", "Bash"}, true}, {[]string{"Read", "Grep"}, false}} {
		j := &job{env: &dispatch.Envelope{TaskID: taskdir.NewID(), NoLandlock: true, Tools: tc.tools}}
		d.recordCalls(j, &callLog{})
		said := strings.Contains(strings.Join(j.env.Notes, "\n"), "as good as the child's word")
		if said != tc.said {
			t.Errorf("tools %v: notes %q; want the unheld record said: %v", tc.tools, j.env.Notes, tc.said)
		}
	}
}

// TestForgedCallRecordIsNotBelieved: the parent's record of a task's calls
// lives in .brood/records, where a repository can ship one and an
// in-place writer can write one (report21). One whose seal does not hold
// — unsealed, sealed for another record, its calls edited after sealing —
// gives a resumed run's guardrails none of its calls (a forged passing
// `go test` is no evidence), says so in the result's notes, and `brood
// tasks log` says it is not believed.
func TestForgedCallRecordIsNotBelieved(t *testing.T) {
	passing := dispatch.CallRecord{Run: 0, Tool: "Bash", Command: "go test ./...", Ended: true, Output: "ok  \tx\t0.1s"}
	for _, tc := range []struct {
		name  string
		forge func(t *testing.T, recs taskdir.Records, id string)
	}{
		{"unsealed", func(t *testing.T, recs taskdir.Records, id string) {
			if err := recs.WriteCalls(id, dispatch.Calls{TaskID: id, Runs: []int{0}, Calls: []dispatch.CallRecord{passing}}); err != nil {
				t.Fatal(err)
			}
		}},
		{"another task's seal", func(t *testing.T, recs taskdir.Records, id string) {
			other := dispatch.Calls{TaskID: taskdir.NewID(), Runs: []int{0}, Calls: []dispatch.CallRecord{passing}}
			if err := dispatch.WriteCalls(recs, other); err != nil {
				t.Fatal(err)
			}
			var rec dispatch.Calls
			if err := recs.ReadCalls(other.TaskID, &rec); err != nil {
				t.Fatal(err)
			}
			rec.TaskID = id
			if err := recs.WriteCalls(id, rec); err != nil {
				t.Fatal(err)
			}
		}},
		{"edited after sealing", func(t *testing.T, recs taskdir.Records, id string) {
			failing := passing
			failing.Output, failing.IsError = "FAIL", true
			if err := dispatch.WriteCalls(recs, dispatch.Calls{TaskID: id, Runs: []int{0}, Calls: []dispatch.CallRecord{failing}}); err != nil {
				t.Fatal(err)
			}
			var rec dispatch.Calls
			if err := recs.ReadCalls(id, &rec); err != nil {
				t.Fatal(err)
			}
			rec.Calls[0] = passing
			if err := recs.WriteCalls(id, rec); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			recs := taskdir.Open(root).Records()
			id := taskdir.NewID()
			tc.forge(t, recs, id)
			d := &Dispatcher{cfg: Config{ProjectRoot: root, Owners: &recs}}
			j := &job{env: &dispatch.Envelope{TaskID: id, ResumeCount: 1}}
			if calls, known := d.recordCalls(j, &callLog{run: 1}); len(calls) != 0 || known {
				t.Fatalf("the resumed run's guardrails judged %+v (earlier runs known: %v); want none of the forged record's calls, and the earlier runs unknown", calls, known)
			}
			if notes := strings.Join(j.env.Notes, "\n"); !strings.Contains(notes, "not believed") || !strings.Contains(notes, id+".calls.json") {
				t.Errorf("notes %q; want the record named as not believed", notes)
			}
			// What this run wrote is sealed and read back as the parent's.
			if _, err := dispatch.ReadCalls(recs, id); err != nil {
				t.Errorf("the parent's own record after the run: %v", err)
			}
		})
	}
	root := t.TempDir()
	p := taskdir.Open(root)
	recs := p.Records()
	id := taskdir.NewID()
	if err := recs.WriteCalls(id, dispatch.Calls{TaskID: id, Runs: []int{0}, Calls: []dispatch.CallRecord{passing}}); err != nil {
		t.Fatal(err)
	}
	if got := CallsDisagreement(p.MustTask(id), recs); !strings.Contains(got, "not believed") {
		t.Errorf("tasks log's line for a forged record: %q; want it not believed", got)
	}
}

// TestEarlierRunsUnrecordedAreUnknown: a resumed task whose parent died
// before it recorded the earlier run's calls (killed mid-run) has its
// guards judge this run's calls with the earlier ones unknown, not as
// "the child made no tool call at all", and a note says so; a resume
// whose earlier runs are all recorded knows them.
func TestEarlierRunsUnrecordedAreUnknown(t *testing.T) {
	root := t.TempDir()
	recs := taskdir.Open(root).Records()
	id := taskdir.NewID()
	d := &Dispatcher{cfg: Config{ProjectRoot: root, Owners: &recs}}
	j := &job{env: &dispatch.Envelope{TaskID: id, ResumeCount: 1}}
	if _, known := d.recordCalls(j, &callLog{run: 1}); known {
		t.Fatal("the earlier run, never recorded, counts as known")
	}
	if notes := strings.Join(j.env.Notes, "\n"); !strings.Contains(notes, "kept no record of an earlier run") {
		t.Errorf("notes %q; want the unrecorded earlier run said", notes)
	}
	j = &job{env: &dispatch.Envelope{TaskID: id, ResumeCount: 2}}
	if _, known := d.recordCalls(j, &callLog{run: 2}); known {
		t.Error("run 0 is still unrecorded after run 1 was: counts as known")
	}
	id2 := taskdir.NewID()
	j = &job{env: &dispatch.Envelope{TaskID: id2}}
	if _, known := d.recordCalls(j, &callLog{}); !known {
		t.Error("a first run's calls are unknown")
	}
	j = &job{env: &dispatch.Envelope{TaskID: id2, ResumeCount: 1}}
	if _, known := d.recordCalls(j, &callLog{run: 1}); !known {
		t.Errorf("a resume whose earlier run was recorded does not know it (notes %q)", j.env.Notes)
	}
}
