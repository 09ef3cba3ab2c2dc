package spend

import (
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/price"
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
