package workflow

import (
	"strings"
	"testing"
)

// TestEstimateSaysWhatItAssumes (fleetqa4 P3): an each over earlier
// outputs has no upper bound, so the estimate says how many items it
// assumes per such each (its expect:, or the guess) instead of a range
// whose top is false; a count it knows stays exact, and until_quiet's
// range, which is real, stays.
func TestEstimateSaysWhatItAssumes(t *testing.T) {
	const list = "  - id: list\n    parallel:\n      - {id: l, agent: explore, prompt: \"list\", schema: {type: object, properties: {items: {type: array}}, required: [items]}}\n"
	for _, tc := range []struct {
		name, phases string
		want         string
		wantNot      string
	}{
		{"exact", "  - id: p\n    parallel: [{agent: explore, prompt: a}, {agent: explore, prompt: b}]\n", "2 agents", "about"},
		{"each, guessed", list + "  - id: review\n    each: l.items[*]\n    stages: [{agent: explore, prompt: \"r {{item}}\"}, {agent: explore, prompt: \"s {{prev}}\"}]\n",
			"about 21 agents, at least 1; it assumes 10 items in each phase review (a guess): an each starts one per item its earlier output gives, more or fewer (set expect: to say how many)", "between"},
		{"each, expected", list + "  - id: review\n    each: l.items[*]\n    expect: 30\n    stages: [{agent: explore, prompt: \"r {{item}}\"}]\n",
			"about 31 agents, at least 1; it assumes 30 items in each phase review (its expect:): an each starts one per item its earlier output gives, more or fewer", "set expect"},
		{"until_quiet", "  - id: hunt\n    until_quiet:\n      agent: explore\n      key: id\n      prompt: \"find bugs\"\n      max_rounds: 4\n      quiet_rounds: 2\n      schema: {type: object, properties: {findings: {type: array, items: {type: object, properties: {id: {type: string}}, required: [id]}}}, required: [findings]}\n",
			"about 4 agents (between 2 and 4: some counts depend on earlier outputs)", "assumes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("plan.yaml", []byte("name: est\nphases:\n"+tc.phases))
			if err != nil {
				t.Fatal(err)
			}
			got := EstimatePlan(p, nil).String()
			if got != tc.want || strings.Contains(got, tc.wantNot) {
				t.Errorf("estimate %q; want %q", got, tc.want)
			}
		})
	}
}
