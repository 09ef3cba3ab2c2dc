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
		{"wrong type", "```json\n{\"findings\": 3}\n```", "", "does not validate against the schema:\n- at '/findings': got number, want array"},
		{"wrong item", "```json\n{\"findings\": [\"a\", 2]}\n```", "", "- at '/findings/1': got number, want string"},
		{"missing field", "```json\n{\"other\": 1}\n```", "", "- at the top level: missing property 'findings'"},
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
	// A $ref outside the schema is refused, never loaded: a schema comes
	// from an agent file or a plan, which a hostile repository writes.
	for _, bad := range []string{`{`, `{"type": 3}`, `{"type": "colour"}`, `{"properties": {"a": {"items": {"type": ["string", "colour"]}}}}`, `{"$ref": "file:///etc/passwd"}`, `{"$ref": "https://example.com/s.json"}`, `{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}`} {
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
			l := &fakeLocal{t: t, answers: tc.answers}
			r, err := call.Do(context.Background(), l, jsonschema.Compile, call.Spec{Agent: "a", Prompt: "go", Schema: []byte(findingsSchema)})
			prompts := l.prompts
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
	l := &fakeLocal{t: t, answers: []string{"ok"}}
	if _, err := call.Do(context.Background(), l, nil, call.Spec{Agent: "a", Prompt: "go", Schema: []byte(findingsSchema)}); !errors.Is(err, call.ErrNoCompiler) || l.n != 0 {
		t.Fatalf("with a schema and no compiler: err %v after %d attempts; want ErrNoCompiler before any", err, l.n)
	}
	if r, err := call.Do(context.Background(), l, nil, call.Spec{Agent: "a", Prompt: "go"}); err != nil || r.Attempts != 1 {
		t.Fatalf("without a schema: %v, %+v", err, r)
	}
}

// fakeLocal runs attempts that answer in turn with answers, all of task T1.
type fakeLocal struct {
	t       *testing.T
	answers []string
	n       int
	prompts []string
}

func (l *fakeLocal) Acquire(ctx context.Context, s call.Spec) (call.Attempt, error) {
	l.prompts = append(l.prompts, s.Prompt)
	if l.n > 0 && s.Resume != "T1" {
		l.t.Fatalf("retry %d resumes %q, want the same task T1", l.n, s.Resume)
	}
	a := &fakeAttempt{summary: l.answers[l.n]}
	l.n++
	return a, nil
}

func (l *fakeLocal) Recorded(ctx context.Context, id string) (*call.Result, bool, error) {
	return nil, false, nil
}

type fakeAttempt struct{ summary string }

func (a *fakeAttempt) TaskID() string                    { return "T1" }
func (a *fakeAttempt) Agent() string                     { return "a" }
func (a *fakeAttempt) Prepare(ctx context.Context) error { return nil }
func (a *fakeAttempt) Isolate(ctx context.Context)       {}
func (a *fakeAttempt) Exec(ctx context.Context)          {}
func (a *fakeAttempt) Judge(ctx context.Context)         {}
func (a *fakeAttempt) Land(ctx context.Context)          {}
func (a *fakeAttempt) Release()                          {}
func (a *fakeAttempt) Record(ctx context.Context) *call.Result {
	return &call.Result{TaskID: "T1", Status: "done", Summary: a.summary}
}

// TestGoRetriesInTheBackground: a background call (call.Go) is prepared
// before Go returns (its task id known at once, a refusal an error) and
// gets the schema loop of a waited-for one.
func TestGoRetriesInTheBackground(t *testing.T) {
	l := &fakeLocal{t: t, answers: []string{"no json", `{"findings":["a"]}`}}
	h, err := call.Go(context.Background(), context.Background(), l, jsonschema.Compile, call.Spec{Agent: "a", Prompt: "go", Schema: []byte(findingsSchema)})
	if err != nil {
		t.Fatal(err)
	}
	if h.TaskID() != "T1" || h.Agent() != "a" {
		t.Fatalf("handle names task %q agent %q before the call ended; want T1, a", h.TaskID(), h.Agent())
	}
	<-h.Done()
	r := h.Result()
	if r == nil || r.Attempts != 2 || !r.OK() || string(r.Output) != `{"findings":["a"]}` {
		t.Fatalf("background call: %+v; want OK after one retry", r)
	}
	if !strings.Contains(l.prompts[0], "ANSWER FORMAT") || !strings.Contains(l.prompts[1], "rejected") {
		t.Errorf("prompts %q: the schema was not told, or the retry not explained", l.prompts)
	}
	if _, err := call.Go(context.Background(), context.Background(), &fakeLocal{t: t}, nil, call.Spec{Agent: "a", Prompt: "go", Schema: []byte(findingsSchema)}); !errors.Is(err, call.ErrNoCompiler) {
		t.Fatalf("a background call with a schema and no compiler: %v, want ErrNoCompiler before it starts", err)
	}
}

// TestValidateNamesWhere: an answer's problems are named at their place in
// the answer (a JSON pointer), unknown fields by name; a keyword the walk
// does not know still fails, with the library's own message.
func TestValidateNamesWhere(t *testing.T) {
	for _, tc := range []struct{ schema, answer, want string }{
		{`{"type":"object","properties":{"a":{"type":"object","additionalProperties":false,"properties":{"b":{"type":"integer","minimum":1}}}}}`,
			`{"a":{"b":0,"colour":"red"}}`, "- at '/a/b': minimum: got 0, want 1\n- at '/a': additional properties 'colour' not allowed"},
		{`{"type":"object","properties":{"mode":{"enum":["fast","slow"]}}}`, `{"mode":"medium"}`, "- at '/mode': value must be one of 'fast', 'slow'"},
		{`{"type":"array","maxItems":1}`, `[1,2]`, "maxItems"},
	} {
		v, err := jsonschema.Compile([]byte(tc.schema))
		if err != nil {
			t.Fatal(err)
		}
		err = v.Validate([]byte(tc.answer))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s against %s: %v\nwant it to contain %q", tc.answer, tc.schema, err, tc.want)
		}
	}
}

// TestTupleItems: the library reads the array keywords of the draft the
// root's $schema names and skips the other draft's without a word, so
// such a schema is refused, naming the keyword, where it is and what to
// write; each draft's own form validates.
func TestTupleItems(t *testing.T) {
	const draft7 = `"$schema":"http://json-schema.org/draft-07/schema#",`
	for _, tc := range []struct{ name, schema, want string }{
		{"tuple items", `{"type":"array","items":[{"type":"string"},{"type":"integer"}]}`, `"items" at / is an array of schemas`},
		{"nested tuple items", `{"type":"object","properties":{"pair":{"type":"array","items":[{"type":"string"}]}}}`, `"items" at /properties/pair is an array of schemas`},
		{"tuple items under 2020-12", `{"$schema":"https://json-schema.org/draft/2020-12/schema","items":[{"type":"string"}]}`, `write it as "prefixItems"`},
		{"additionalItems", `{"type":"array","prefixItems":[{"type":"string"}],"additionalItems":false}`, `"additionalItems" at / is draft-07's`},
		{"prefixItems under draft-07", `{` + draft7 + `"type":"array","prefixItems":[{"type":"string"}]}`, `"prefixItems" at / is draft 2020-12's`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jsonschema.Compile([]byte(tc.schema))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Compile(%s) = %v, want one line with %q", tc.schema, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name, schema string
		good, bad    []string
	}{
		{"draft-07 tuple", `{` + draft7 + `"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}`,
			[]string{`["a",1]`, `["a"]`}, []string{`[1,"a"]`, `["a",1,2]`}},
		{"2020-12 prefixItems", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`,
			[]string{`["a",1]`, `["a"]`}, []string{`[1,"a"]`, `["a",1,2]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := jsonschema.Compile([]byte(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range tc.good {
				if err := v.Validate([]byte(a)); err != nil {
					t.Errorf("%s: %v", a, err)
				}
			}
			for _, a := range tc.bad {
				if err := v.Validate([]byte(a)); err == nil {
					t.Errorf("%s validates", a)
				}
			}
		})
	}
}
