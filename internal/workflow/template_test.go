package workflow

import (
	"encoding/json"
	"testing"
)

func TestSelectors(t *testing.T) {
	var scope map[string]any
	_ = json.Unmarshal([]byte(`{
		"inputs": {"dir": "internal", "files": ["a.go", "b.go"]},
		"review": [{"findings": [{"id": 1}, {"id": 2}]}, null, {"findings": [{"id": 3}]}],
		"one": {"answer": "yes"}
	}`), &scope)
	for _, tc := range []struct{ sel, want string }{
		{"inputs.dir", `"internal"`},
		{"inputs.files[1]", `"b.go"`},
		{"inputs.files[*]", `["a.go","b.go"]`},
		{"review[*].findings[*]", `[{"id":1},{"id":2},{"id":3}]`},
		{"review[*].findings[*].id", `[1,2,3]`},
		{"review[0].findings", `[{"id":1},{"id":2}]`},
		{"review[1].findings", `null`},
		{"review[9]", `null`},
		{"one.answer", `"yes"`},
		{"one.missing", `null`},
	} {
		sel, err := ParseSelector(tc.sel)
		if err != nil {
			t.Fatalf("%s: %v", tc.sel, err)
		}
		v, err := sel.Eval(scope)
		if err != nil {
			t.Fatalf("%s: %v", tc.sel, err)
		}
		got, _ := json.Marshal(v)
		if string(got) != tc.want {
			t.Errorf("%s = %s, want %s", tc.sel, got, tc.want)
		}
	}
	for _, bad := range []string{"", ".x", "a[", "a[x]", "a..b", "a[-1]"} {
		if _, err := ParseSelector(bad); err == nil {
			t.Errorf("ParseSelector(%q) = nil error", bad)
		}
	}
	scope["inputs"] = Own(scope["inputs"]) // the user's: inserted as it is
	got, err := Render("dir {{inputs.dir}}: {{ inputs.files[*] }}", scope)
	if err != nil || got != "dir internal: [\n  \"a.go\",\n  \"b.go\"\n]" {
		t.Fatalf("Render = %q, %v", got, err)
	}
}

func TestTallyVotes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		votes  []any
		accept Accept
		ok     bool
		value  any
	}{
		{"majority", []any{"a", "a", "b"}, Accept{Rule: "majority"}, true, "a"},
		{"failed votes count as no", []any{"a", nil, nil}, Accept{Rule: "majority"}, false, nil},
		{"tie is no majority", []any{"a", "a", "b", "b"}, Accept{Rule: "majority"}, false, nil},
		{"unanimous", []any{"a", "a", "a"}, Accept{Rule: "unanimous"}, true, "a"},
		{"unanimous with a failure", []any{"a", "a", nil}, Accept{Rule: "unanimous"}, false, nil},
		{"at least", []any{"a", "b", "a", "c"}, Accept{Rule: "at_least", AtLeast: 2}, true, "a"},
		{"at least not reached", []any{"a", "b", "c"}, Accept{Rule: "at_least", AtLeast: 2}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := TallyVotes(tc.votes, tc.accept)
			if got.Accepted != tc.ok || got.Value != tc.value {
				t.Fatalf("tally %+v; want accepted=%v value=%v", got, tc.ok, tc.value)
			}
		})
	}
}
