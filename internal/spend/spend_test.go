package spend

import (
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/price"
	"github.com/broodhq/brood/internal/taskdir"
)

func TestLedgerCost(t *testing.T) {
	tab := price.Table{"a": {Input: 1, Output: 2}, "b": {Input: 10, Note: "assumed: x"}}
	for _, tc := range []struct {
		name     string
		ledger   Ledger
		usd      float64
		unpriced int
		shown    string
	}{
		{"priced", Ledger{"a": {Input: 1e6, Output: 1e6}, "anthropic/b": {Input: 1e5}}, 4, 0, "$4.00"},
		{"some unpriced", Ledger{"a": {Input: 1000}, "ollama/qwen3": {Input: 50}}, 0.001, 1, "$0.0010+"},
		{"none priced", Ledger{"script:x.yaml": {Input: 50}}, 0, 1, ""},
		{"empty", Ledger{}, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.ledger.Cost(tab)
			if c.USD != tc.usd || len(c.Unpriced) != tc.unpriced || c.String() != tc.shown {
				t.Errorf("cost %+v (%q), want %v, %d unpriced, %q", c, c.String(), tc.usd, tc.unpriced, tc.shown)
			}
		})
	}
	l := Ledger{}
	l.Add("a", model.Usage{})
	l.Add("a", model.Usage{Input: 2})
	l.Merge(Ledger{"a": {Input: 3}, "b": {Output: 1}})
	if len(l) != 2 || l["a"].Input != 5 || l.Total().Total() != 6 {
		t.Errorf("ledger %+v", l)
	}
}

// TestTasksBelow: a run's bill counts its own tasks and, where one of
// them could delegate, the tasks below it, at each task's model; tasks of
// other runs are not counted.
func TestTasksBelow(t *testing.T) {
	root := t.TempDir()
	write := func(id, parent, mdl string, depth, max int, allowed []string, u, below model.Usage) {
		t.Helper()
		td := taskdir.Open(root).MustTask(id)
		if err := td.Create(); err != nil {
			t.Fatal(err)
		}
		env := dispatch.Envelope{TaskID: id, ParentTaskID: parent, Model: mdl, Depth: depth, MaxDepth: max, AllowedDestinations: allowed}
		res := dispatch.Result{TaskID: id, Status: dispatch.StatusDone, Usage: u, ChildUsage: below}
		if err := td.WriteJSON(taskdir.Envelope, env, false); err != nil {
			t.Fatal(err)
		}
		if err := td.WriteJSON(taskdir.Result, res, false); err != nil {
			t.Fatal(err)
		}
	}
	u := func(n int64) model.Usage { return model.Usage{Input: n} }
	for range 20 {
		write(dispatch.NewID(), "", "other", 1, 1, nil, u(1000), model.Usage{})
	}
	a, b := dispatch.NewID(), dispatch.NewID()
	write(a, "", "m1", 1, 1, nil, u(10), model.Usage{})
	write(b, "", "m1", 1, 1, nil, u(20), model.Usage{})
	l, err := Tasks(root, []string{a, b})
	if err != nil || len(l) != 1 || l["m1"].Input != 30 {
		t.Fatalf("flat run: %v, %v; want m1 30", l, err)
	}
	c, g := dispatch.NewID(), dispatch.NewID()
	write(c, "", "m1", 1, 2, []string{"*"}, u(5), u(7))
	write(g, c, "m2", 2, 2, nil, u(7), model.Usage{})
	l, err = Tasks(root, []string{a, c})
	if err != nil || len(l) != 2 || l["m1"].Input != 15 || l["m2"].Input != 7 {
		t.Fatalf("nested run: %v, %v; want m1 15, m2 7", l, err)
	}
}
