package jsonschema_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/call/jsonschema"
)

const findingsSchema = `{"type":"object","properties":{"findings":{"type":"array","items":{"type":"string"}}},"required":["findings"]}`

func TestCheckFindsAndValidatesTheAnswer(t *testing.T) {
	s, err := call.CompileSchema(jsonschema.Compile, []byte(findingsSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, text, want, err string
	}{
		{"fenced", "Here it is.\n```json\n{\"findings\": [\"a\"]}\n```\nConfidence: high", `{"findings":["a"]}`, ""},
		{"bare", ` {"findings": []} `, `{"findings":[]}`, ""},
		{"trailing object", "I found: {\"findings\":[\"x\"]}", `{"findings":["x"]}`, ""},
		{"no json", "nothing to report", "", "holds no JSON"},
		{"wrong type", "```json\n{\"findings\": 3}\n```", "", "does not validate"},
		{"missing field", "```json\n{\"other\": 1}\n```", "", "findings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Check(tc.text)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestCompileSchemaRejectsBadSchemas(t *testing.T) {
	for _, bad := range []string{`{`, `{"type": 3}`} {
		if _, err := call.CompileSchema(jsonschema.Compile, []byte(bad)); err == nil {
			t.Errorf("CompileSchema(%s) = nil error", bad)
		}
	}
}

// TestWithSchemaRetriesOnTheSameTask: an answer that does not validate goes
// back to the same task with what was wrong, at most Retries times.
func TestWithSchemaRetriesOnTheSameTask(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answers  []string
		attempts int
		ok       bool
	}{
		{"first try", []string{`{"findings":[]}`}, 1, true},
		{"second try", []string{"no json", `{"findings":["a"]}`}, 2, true},
		{"gives up after two retries", []string{"x", "y", "z", `{"findings":[]}`}, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var prompts []string
			n := 0
			attempt := func(ctx context.Context, s call.Spec) (*call.Result, error) {
				prompts = append(prompts, s.Prompt)
				if n > 0 && s.Resume != "T1" {
					t.Fatalf("retry %d resumes %q, want the same task T1", n, s.Resume)
				}
				r := &call.Result{TaskID: "T1", Status: "done", Summary: tc.answers[n]}
				n++
				return r, nil
			}
			r, err := call.WithSchema(context.Background(), jsonschema.Compile, call.Spec{Agent: "a", Prompt: "go", Schema: []byte(findingsSchema)}, attempt)
			if err != nil {
				t.Fatal(err)
			}
			if r.Attempts != tc.attempts || r.OK() != tc.ok {
				t.Fatalf("attempts %d ok %v (failures %v); want %d %v", r.Attempts, r.OK(), r.Failures, tc.attempts, tc.ok)
			}
			if !strings.Contains(prompts[0], "ANSWER FORMAT") {
				t.Errorf("first prompt does not describe the answer: %q", prompts[0])
			}
			if len(prompts) > 1 && !strings.Contains(prompts[1], "rejected") {
				t.Errorf("retry prompt does not say what was wrong: %q", prompts[1])
			}
		})
	}
}

// TestWithSchemaNeedsACompiler: a process given no compiler (brood-child)
// refuses a call with a schema before it runs anything, and runs one
// without.
func TestWithSchemaNeedsACompiler(t *testing.T) {
	ran := 0
	attempt := func(ctx context.Context, s call.Spec) (*call.Result, error) {
		ran++
		return &call.Result{TaskID: "T1", Status: "done", Summary: "ok"}, nil
	}
	if _, err := call.WithSchema(context.Background(), nil, call.Spec{Agent: "a", Prompt: "go", Schema: []byte(findingsSchema)}, attempt); !errors.Is(err, call.ErrNoCompiler) || ran != 0 {
		t.Fatalf("with a schema and no compiler: err %v after %d attempts; want ErrNoCompiler before any", err, ran)
	}
	if r, err := call.WithSchema(context.Background(), nil, call.Spec{Agent: "a", Prompt: "go"}, attempt); err != nil || r.Attempts != 1 {
		t.Fatalf("without a schema: %v, %+v", err, r)
	}
}
