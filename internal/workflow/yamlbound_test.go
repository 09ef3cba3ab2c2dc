package workflow

import (
	"fmt"
	"strings"
	"testing"
)

// aliasBomb is nine levels of nine aliases: 700 bytes of YAML that expand
// to 9^9 (387 million) nodes.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		fmt.Fprintf(&b, "%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = n
	}
	b.WriteString("name: x\nphases: []\n")
	return b.String()
}

// TestPlanAliasesAreBounded: a plan whose aliases expand past the bound is
// refused before it is decoded (the decoder would build every node), and a
// plan using anchors as people do is read as before.
func TestPlanAliasesAreBounded(t *testing.T) {
	fine := `name: anchors
defaults: &d {agent: explore, prompt: "look"}
phases:
  - id: one
    stages: [*d]
  - id: two
    stages: [*d, *d]
`
	for _, tc := range []struct {
		name, text, want string
	}{
		{"bomb", aliasBomb(), "aliases expand to more than 16 MiB"},
		{"long string aliased", "s: &s \"" + strings.Repeat("x", 900_000) + "\"\nl: [" + strings.TrimSuffix(strings.Repeat("*s,", 100), ",") + "]\nname: x\nphases: []\n", "aliases expand to more than 16 MiB"},
		{"long", "name: x\n# " + strings.Repeat("x", maxPlanBytes) + "\nphases: []\n", "a plan may be at most 1048576"},
		{"anchors", fine, ""},
	} {
		_, err := Parse("plan.yaml", []byte(tc.text))
		switch {
		case tc.want == "" && err != nil && strings.Contains(err.Error(), "alias"):
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err %v; want %q", tc.name, err, tc.want)
		}
	}
	if n, err := yamlNodes([]byte(aliasBomb()), 1<<62); err != nil || n < 387_000_000*16 {
		t.Errorf("the bomb counted %d nodes (%v); want its whole expansion, 9^9 and more", n, err)
	}
}
