package workflow

import "testing"

// TestLinesOfEveryFormat: a field is found on its own line in YAML, JSON
// and TOML, and a field that is not written is found at its parent.
func TestLinesOfEveryFormat(t *testing.T) {
	yamlDoc := "name: t\nphases:\n  - id: a\n    parallel:\n      - agent: x\n        prompt: y\n  - id: b\n    votes:\n      count: 3\n"
	jsonDoc := "{\n  \"name\": \"t\",\n  \"phases\": [\n    {\"id\": \"a\", \"parallel\": [\n      {\"agent\": \"x\",\n       \"prompt\": \"y\"}]},\n    {\"id\": \"b\",\n     \"votes\": {\"count\": 3}}\n  ]\n}\n"
	tomlDoc := "name = \"t\"\n\n[[phases]]\nid = \"a\"\n\n[[phases.parallel]]\nagent = \"x\"\nprompt = \"\"\"\nid = \"not a key\"\n\"\"\"\n\n[[phases]]\nid = \"b\"\n[phases.votes]\ncount = 3\n"
	for _, tc := range []struct {
		name  string
		lines func(string) int
		want  map[string]int
	}{
		{"yaml", yamlLines([]byte(yamlDoc)), map[string]int{"name": 1, "phases[0].parallel[0].prompt": 6, "phases[1].votes.count": 9, "phases[1].votes.field": 9}},
		{"json", jsonLines([]byte(jsonDoc)), map[string]int{"name": 2, "phases[0].parallel[0].prompt": 6, "phases[1].votes.count": 8, "phases[1].votes.field": 8, "phases[1].id": 7}},
		{"toml", tomlLines([]byte(tomlDoc)), map[string]int{"name": 1, "phases[0].parallel[0].agent": 7, "phases[0].parallel[0].prompt": 8, "phases[1].id": 13, "phases[1].votes.count": 15, "phases[1].votes.field": 14}},
	} {
		for field, want := range tc.want {
			if got := tc.lines(field); got != want {
				t.Errorf("%s: %s is on line %d, want %d", tc.name, field, got, want)
			}
		}
	}
}

func TestDidYouMean(t *testing.T) {
	known := []string{"agent", "prompt", "explore", "general-purpose"}
	for in, want := range map[string]string{
		"agnet": `; did you mean "agent"?`, "Explore": `; did you mean "explore"?`, "prmpt": `; did you mean "prompt"?`,
		"agent": "", "zzz": "", "general": "",
	} {
		if got := didYouMean(in, known); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", in, got, want)
		}
	}
}
