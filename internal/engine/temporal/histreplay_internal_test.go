package temporal

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/codesnap"
	wf "github.com/broodhq/brood/internal/workflow"
)

// fixture is a recorded history of testdata, its workflow id and
// execution, and the result its workflow completed with.
func fixture(t *testing.T, file string) (*historypb.History, string, string, []byte) {
	t.Helper()
	f, err := os.Open("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var in RunInput
	start := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes()
	if err := converter.GetDefaultDataConverter().FromPayloads(start.GetInput(), &in); err != nil {
		t.Fatal(err)
	}
	last := h.GetEvents()[len(h.GetEvents())-1].GetWorkflowExecutionCompletedEventAttributes()
	if last == nil {
		t.Fatalf("%s does not end with the workflow's completion", file)
	}
	exec := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetOriginalExecutionRunId()
	return h, in.RunID, exec, last.GetResult().GetPayloads()[0].GetData()
}

// sameRecorded: out is the recorded output but for the calls' figures
// (usage, attempts, worker): today's workflow takes none from a result
// whose signature does not cover them (a v1 one: fleetsig3), where the
// workflow that recorded it did.
func sameRecorded(t *testing.T, out *RunOutput, recorded []byte) bool {
	t.Helper()
	b, _ := json.Marshal(out)
	var got, want any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(recorded, &want); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(withoutFigures(got), withoutFigures(want))
}

func withoutFigures(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"usage", "attempts", "worker"} {
			delete(x, k)
		}
		for k, e := range x {
			x[k] = withoutFigures(e)
		}
	case []any:
		for i, e := range x {
			x[i] = withoutFigures(e)
		}
	}
	return v
}

// TestRecordedRunsReplayToTheirOwnOutput: an honest run's history (the
// recorded fixtures: one from before lazy calls, one whose workflow
// checked its results against signed worker keys) replays with today's
// workflow code to the output its workflow completed with (but for the
// calls' figures a v1 signature does not cover: sameRecorded): what the
// submitter takes of an honest run is what it took before.
func TestRecordedRunsReplayToTheirOwnOutput(t *testing.T) {
	for _, file := range []string{"plan-history-before-lazy-calls.json", "plan-history-checked-results-v1.json"} {
		t.Run(file, func(t *testing.T) {
			h, id, exec, recorded := fixture(t, file)
			got, err := replayHistory(replayConfig{dc: converter.GetDefaultDataConverter()}, h, id, exec, PlanWorkflowName, PlanWorkflow, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Ran || got.Err != nil || got.Out == nil {
				t.Fatalf("replay: ran %v, err %v, out %v; want the workflow's output", got.Ran, got.Err, got.Out)
			}
			if !sameRecorded(t, got.Out, recorded) {
				b, _ := json.Marshal(got.Out)
				t.Errorf("replayed output differs from the recorded one:\n got %s\nwant %s", b, recorded)
			}
		})
	}
}

// TestReplayRefusesAnotherWorkflowsHistory: a history whose commands are
// not brood's (a timer the code never starts, put before the first
// activity) is refused with brood's line; one that also carries a version
// of a change this brood does not know says to upgrade brood.
func TestReplayRefusesAnotherWorkflowsHistory(t *testing.T) {
	timer := func(h *historypb.History) {
		// The first activity's schedule becomes a timer's start.
		for _, e := range h.GetEvents() {
			if e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
				e.EventType = enumspb.EVENT_TYPE_TIMER_STARTED
				e.Attributes = &historypb.HistoryEvent_TimerStartedEventAttributes{TimerStartedEventAttributes: &historypb.TimerStartedEventAttributes{TimerId: "1"}}
				return
			}
		}
	}
	newer := func(h *historypb.History) {
		timer(h)
		for _, e := range h.GetEvents() {
			if m := e.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "Version" {
				p, _ := converter.GetDefaultDataConverter().ToPayloads("brood.plan.from-the-future")
				m.Details["change-id"] = p
				return
			}
		}
		t.Fatal("the fixture has no version marker")
	}
	newerSDK := func(h *historypb.History) {
		// A flag no SDK brood knows on the first workflow task: what a
		// newer Temporal SDK records (review26 P3-5).
		for _, e := range h.GetEvents() {
			if c := e.GetWorkflowTaskCompletedEventAttributes(); c != nil {
				if c.SdkMetadata == nil {
					c.SdkMetadata = &sdkpb.WorkflowTaskCompletedMetadata{}
				}
				c.SdkMetadata.LangUsedFlags = append(c.SdkMetadata.LangUsedFlags, 9999)
				return
			}
		}
		t.Fatal("the fixture has no completed workflow task")
	}
	for _, tc := range []struct {
		name   string
		change func(*historypb.History)
		want   []string
	}{
		// An attack, or a fleet whose workers run another brood: both
		// are named (review26 P3-5), the refusal whole.
		{"another command", timer, []string{"does not replay with brood's own workflow code", "nothing of it is taken",
			"something other than a brood worker completed its workflow tasks", "workers of a brood version other than this one ran it"}},
		{"a newer brood's", newer, []string{"upgrade brood"}},
		{"a newer SDK's", newerSDK, []string{"a Temporal SDK flag this brood does not know", "nothing of it is taken", "upgrade brood",
			"something other than a brood worker completed its workflow tasks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, id, exec, _ := fixture(t, "plan-history-checked-results-v1.json")
			tc.change(h)
			_, err := replayHistory(replayConfig{dc: converter.GetDefaultDataConverter()}, h, id, exec, PlanWorkflowName, PlanWorkflow, nil)
			if err == nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("replay: %v; want it refused in one line", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("replay: %v; want it to say %q", err, w)
				}
			}
		})
	}
}

// TestReplayDoesNotCompareActivityInputs: the Go SDK's replayer matches
// an ActivityTaskScheduled event to the workflow's command by activity id
// and type only: a history whose scheduled call carries another input
// than brood's code made replays, to the same output. What a call's input
// was is checked at the worker (the signed brief) and in its result's
// signature, not by the replay (docs/scale-out.md).
func TestReplayDoesNotCompareActivityInputs(t *testing.T) {
	h, id, exec, recorded := fixture(t, "plan-history-checked-results-v1.json")
	changed := false
	for _, e := range h.GetEvents() {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			p, _ := converter.GetDefaultDataConverter().ToPayloads(map[string]string{"prompt": "IMPOSTOR: another brief"})
			a.Input = &commonpb.Payloads{Payloads: p.GetPayloads()}
			a.TaskQueue.Name = "another-queue"
			changed = true
		}
	}
	if !changed {
		t.Fatal("the fixture schedules no activity")
	}
	got, err := replayHistory(replayConfig{dc: converter.GetDefaultDataConverter()}, h, id, exec, PlanWorkflowName, PlanWorkflow, nil)
	if err != nil {
		t.Fatalf("the SDK's replay compared an activity's input (update docs/scale-out.md): %v", err)
	}
	if !sameRecorded(t, got.Out, recorded) {
		t.Errorf("the replay's output changed with the scheduled inputs")
	}
}

// TestShowJudgesTheTip: workflow show from a checkout that kept no result
// makes settleOwn's checks of the run's tree on the replay's output,
// landing and keeping nothing (review25 P2-4, defence in depth: an honest
// replay returns the tree its chain steps signed): a done writer with a
// change is not-applied when the run came back with no tree, and the run
// failed when its tree is signed by no trusted worker.
func TestShowJudgesTheTip(t *testing.T) {
	trust := NewTrust()
	if err := trust.Add(seeded(7).Public(), "test"); err != nil {
		t.Fatal(err)
	}
	e := New(Config{Workers: NewResultTrust(trust, "trusted_workers")})
	const run, task = "01M94GP8WHCA3G6AZ1AHXZK600", "01M94GP8WHCA3G6AZ1AHXZK68W"
	start := &codesnap.Snapshot{Tree: strings.Repeat("a", 40), Base: strings.Repeat("b", 40), ObjectFormat: "sha1"}
	other := &codesnap.Snapshot{Tree: strings.Repeat("c", 40), Base: strings.Repeat("b", 40), ObjectFormat: "sha1"}
	code, _ := json.Marshal(codesnap.Result{Patch: &blobstore.Ref{Key: "p", Size: 1, SHA256: strings.Repeat("0", 64)}})
	for _, tc := range []struct {
		name        string
		tip         *codesnap.Snapshot
		run, call   string
		inReasonToo string
	}{
		{"no tree", nil, wf.RunPartial, wf.CallNotApplied, "not in the tree the run came back with"},
		{"an unsigned tree", other, wf.RunFailed, wf.CallNotApplied, "signed by no brood worker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &wf.Result{RunID: run, Status: wf.RunDone, Phases: []wf.PhaseResult{{ID: "a", Status: wf.PhaseDone, Calls: []wf.CallRecord{
				{Key: "a/0", TaskID: task, Status: wf.CallDone, Output: "ok", Code: code, Landed: "in the run's tree: out.txt"},
				{Key: "a/1", TaskID: "01M94GP8WHCA3G6AZ1AHXZK69W", Status: wf.CallDone, Output: "ok"}}}}}
			in := RunInput{RunID: run, Code: start, Tip: tc.tip}
			e.judgeTip(t.Context(), ownPart(in, nil), &runRead{out: RunOutput{Input: in, Result: res}}, "E1")
			c := res.Phases[0].Calls[0]
			if c.Status != tc.call || res.Status == wf.RunDone || !strings.Contains(res.Reason, tc.inReasonToo) {
				t.Errorf("run %s (%s), writer %s; want the run not done, the writer %s, saying %q", res.Status, res.Reason, c.Status, tc.call, tc.inReasonToo)
			}
		})
	}
}

// TestReplayRefusesASkippedVersion (review26 P1-1): a run whose start
// requires a workflow change (RunInput.Versions, as today's submitters
// start every run) has its history refused when it lacks that change's
// marker (whoever completed the workflow tasks recorded none, and brood's
// code, replaying, took its branch from before the change: here no check
// of the results at all); the same history with the marker replays.
func TestReplayRefusesASkippedVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		drop bool
		want string
	}{
		{"the marker recorded", false, ""},
		{"the marker missing", true, `it skips version 1 of "brood.plan.checked-results"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, id, exec, _ := fixture(t, "plan-history-checked-results-v1.json")
			dc := converter.GetDefaultDataConverter()
			start := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes()
			var in RunInput
			if err := dc.FromPayloads(start.GetInput(), &in); err != nil {
				t.Fatal(err)
			}
			in.Versions = map[string]int{checkedResultsVersion: 1}
			p, err := dc.ToPayloads(in)
			if err != nil {
				t.Fatal(err)
			}
			start.Input = p
			for _, e := range h.GetEvents() {
				if m := e.GetMarkerRecordedEventAttributes(); m != nil && tc.drop && strings.Contains(m.String(), checkedResultsVersion) {
					other, _ := dc.ToPayloads("x")
					m.Details["change-id"] = other // a marker of no change brood's code asks for
				}
			}
			_, err = replayHistory(replayConfig{dc: dc}, h, id, exec, PlanWorkflowName, PlanWorkflow, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("replay: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "does not replay")):
				t.Fatalf("replay: %v; want it refused: %s", err, tc.want)
			}
		})
	}
}

// TestEveryVersionIsKnown: every workflow.GetVersion change id of the
// package is in workflowChanges, the one list a submitter requires and a
// replay checks, at the highest version the call supports.
func TestEveryVersionIsKnown(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	type use struct{ id, max string }
	var uses []use
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ValueSpec:
				for i, name := range x.Names {
					if i < len(x.Values) {
						if lit, ok := x.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							consts[name.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "GetVersion" && isIdent(sel.X, "workflow") && len(x.Args) == 4 {
					id, _ := x.Args[1].(*ast.Ident)
					lit, _ := x.Args[3].(*ast.BasicLit)
					if id == nil || lit == nil {
						t.Errorf("%s: a GetVersion whose change id or highest version is not a constant", fset.Position(x.Pos()))
						return true
					}
					uses = append(uses, use{id.Name, lit.Value})
				}
			}
			return true
		})
	}
	if len(uses) == 0 {
		t.Fatal("found no workflow.GetVersion call")
	}
	known := workflowChanges()
	for _, u := range uses {
		change := consts[u.id]
		if v, ok := known[change]; !ok || strconv.Itoa(v) != u.max {
			t.Errorf("workflow change %q (%s), highest version %s: workflowChanges has %d, %v; add it there", change, u.id, u.max, v, ok)
		}
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
