package workflow

import (
	"reflect"
	"strings"
	"testing"
)

// TestNotLandedSaysTheWorkIsNotInTheTree: a fleet run whose tree did not
// land ends as a local run whose writer's change did not apply: its
// writers not-applied with null output, their phase failed when nothing
// else yielded, partial otherwise, and the run failed or partial; a run
// with no change in its tree keeps its status.
func TestNotLandedSaysTheWorkIsNotInTheTree(t *testing.T) {
	writer := func(key string) CallRecord {
		return CallRecord{Key: key, TaskID: "T" + key, Status: CallDone, Output: "wrote", Landed: "in the run's tree: f.txt"}
	}
	reader := func(key string) CallRecord { return CallRecord{Key: key, Status: CallDone, Output: "read"} }
	cases := []struct {
		name       string
		res        Result
		marked     int
		status     string
		phases     []string
		wantReason []string
	}{
		{"one writer, one phase", Result{Status: RunDone, Phases: []PhaseResult{{ID: "write", Status: PhaseDone, Calls: []CallRecord{writer("write/0")}}}},
			1, RunFailed, []string{PhaseFailed}, []string{"phase write failed"}},
		{"a writer beside a reader", Result{Status: RunDone, Reason: "phase e: each: x gave no items, so no agent ran", Phases: []PhaseResult{
			{ID: "w", Status: PhaseDone, Calls: []CallRecord{writer("w/0"), reader("w/1")}},
			{ID: "r", Status: PhaseDone, Calls: []CallRecord{reader("r/0")}}}},
			1, RunPartial, []string{PhasePartial, PhaseDone}, []string{"phase w partial", "each: x gave no items"}},
		{"already partial", Result{Status: RunPartial, Reason: "phase a partial", Phases: []PhaseResult{
			{ID: "a", Status: PhasePartial, Calls: []CallRecord{writer("a/0"), {Key: "a/1", Status: CallNotApplied, Landed: "conflict"}}},
			{ID: "b", Status: PhaseDone, Calls: []CallRecord{reader("b/0")}}}},
			1, RunPartial, []string{PhaseFailed, PhaseDone}, []string{"phase a failed"}},
		{"no change in the tree", Result{Status: RunDone, Phases: []PhaseResult{{ID: "r", Status: PhaseDone, Calls: []CallRecord{reader("r/0")}}}},
			0, RunDone, []string{PhaseDone}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.res
			if n := r.NotLanded("a conflict with your edit"); n != tc.marked {
				t.Fatalf("marked %d calls; want %d", n, tc.marked)
			}
			if r.Status != tc.status {
				t.Errorf("run %s (%s); want %s", r.Status, r.Reason, tc.status)
			}
			for i, want := range tc.phases {
				if r.Phases[i].Status != want {
					t.Errorf("phase %s %s; want %s", r.Phases[i].ID, r.Phases[i].Status, want)
				}
			}
			for _, w := range tc.wantReason {
				if !strings.Contains(r.Reason, w) {
					t.Errorf("reason %q lacks %q", r.Reason, w)
				}
			}
			if strings.Count(r.Reason, "phase a ") > 1 {
				t.Errorf("reason %q says phase a twice", r.Reason)
			}
			for _, ph := range r.Phases {
				for _, c := range ph.Calls {
					if c.Landed != "" && c.Landed != "conflict" && (c.Status != CallNotApplied || c.Output != nil || !strings.Contains(c.Error, "brood tasks show "+c.TaskID)) {
						t.Errorf("call %s: %s, output %v, error %q; want not-applied, null, naming its task", c.Key, c.Status, c.Output, c.Error)
					}
				}
			}
		})
	}
}

// TestNotLandedWithdrawsTheOutputs: a not-applied call's output is in
// neither its phase's output nor the run's outputs, as on the local
// engine, whose not-applied call never yields one: a parallel phase's
// entry and its named task's, an each phase's item; the others stand.
func TestNotLandedWithdrawsTheOutputs(t *testing.T) {
	lost := func(key string) CallRecord {
		return CallRecord{Key: key, TaskID: "T", Status: CallDone, Output: "wrote", Landed: "in the run's tree"}
	}
	kept := func(key string) CallRecord { return CallRecord{Key: key, Status: CallDone, Output: "read"} }
	cases := []struct {
		name string
		ph   PhaseResult
		outs map[string]any
		want map[string]any
	}{
		{"parallel, one writer", PhaseResult{ID: "write", Shape: "parallel", Status: PhaseDone, Output: []any{"wrote"}, Calls: []CallRecord{lost("write/0")}},
			map[string]any{"write": []any{"wrote"}}, map[string]any{"write": []any{nil}}},
		{"parallel, a named writer beside a reader", PhaseResult{ID: "p", Shape: "parallel", Status: PhaseDone, Output: []any{"read", "wrote"}, Calls: []CallRecord{kept("p/r"), lost("p/w")}},
			map[string]any{"p": []any{"read", "wrote"}, "r": "read", "w": "wrote"}, map[string]any{"p": []any{"read", nil}, "r": "read", "w": nil}},
		{"each, the second item's stage", PhaseResult{ID: "e", Shape: "each", Status: PhaseDone, Output: []any{"read", "wrote"}, Calls: []CallRecord{kept("e/0/0"), lost("e/1/0")}},
			map[string]any{"e": []any{"read", "wrote"}}, map[string]any{"e": []any{"read", nil}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Result{Status: RunDone, Outputs: tc.outs, Phases: []PhaseResult{tc.ph}}
			r.NotLanded("a conflict")
			if !reflect.DeepEqual(r.Outputs, tc.want) {
				t.Errorf("outputs %#v; want %#v", r.Outputs, tc.want)
			}
			if !reflect.DeepEqual(r.Phases[0].Output, tc.want[tc.ph.ID]) {
				t.Errorf("phase output %#v; want %#v", r.Phases[0].Output, tc.want[tc.ph.ID])
			}
		})
	}
}
