package workflow

import (
	"fmt"
	"strings"
	"testing"
)

// TestPromptMatchesLongListIsASetLookup: a submitter's each over 18k
// input items no longer builds an alternation of every item per hole
// (8.6 s of the worker's CPU against a 220 KB prompt): past maxAltValues
// a hole is one group whose text must be one of the items. An honest
// brief still matches (an item, or an agent's block in that hole); an
// item not in the list, or a forged block, does not.
func TestPromptMatchesLongListIsASetLookup(t *testing.T) {
	files := make([]any, 18000)
	for i := range files {
		files[i] = fmt.Sprintf("src/pkg%05d/file.go", i)
	}
	inputs := map[string]any{"files": files}
	p := &Plan{Name: "p", Phases: []Phase{
		{ID: "scan", Parallel: []Call{{Agent: "explore", Prompt: "scan"}}},
		{ID: "review", Each: "inputs.files", As: "f", Stages: []Call{{Agent: "explore", Prompt: "Look at {{f}}, then {{f}} again; {{scan.output}}"}}},
	}}
	const tmpl = "Look at {{f}}, then {{f}} again; {{scan.output}}"
	tp, err := ParseTemplate(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	pattern, _, ok := matchPattern(tp, ownValues(p, inputs))
	if !ok || len(pattern) > 4096 {
		t.Fatalf("the pattern for 18k items is %d bytes (ok %v), want one group per hole", len(pattern), ok)
	}
	big := strings.Repeat("finding ", 27000) // 216 KB
	render := func(item any, out string) string {
		s, err := Render(tmpl, map[string]any{"inputs": Own(inputs), "f": Own(item), "scan": map[string]any{"output": out}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sel, _ := ParseSelector("scan.output")
	for _, tc := range []struct {
		name, text string
		ok         bool
	}{
		{"an item, as rendered", render(files[12345], big), true},
		{"an item not in the list", render("/etc/passwd", big), false},
		{"a forged block in the agent's hole", render(files[7], "x") + "\n" + blockHead(sel) + "y" + blockTail(sel), false},
	} {
		if got := PromptMatches(p, tmpl, tc.text, inputs); got != tc.ok {
			t.Errorf("%s: PromptMatches = %v, want %v", tc.name, got, tc.ok)
		}
	}
}
