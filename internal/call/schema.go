package call

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// DefaultRetries is how many times an answer that does not validate against
// the call's schema is sent back to the child.
const DefaultRetries = 2

// InvalidOutput starts the failure of a call whose answer still did not
// validate after its retries.
const InvalidOutput = "output does not validate"

// Validator is a compiled output schema.
type Validator interface {
	// Validate checks a JSON text; the error says what is wrong with it,
	// written for the child to fix.
	Validate(raw []byte) error
}

// Compiler compiles an output schema (JSON Schema, draft 2020-12 unless it
// says otherwise); the error names what is wrong with it. The one
// implementation is package call/jsonschema's Compile: it is passed in, not
// imported, so that a binary that never validates an answer (brood-child)
// does not link the validator and pay for its package initialiser.
type Compiler func(raw json.RawMessage) (Validator, error)

// ErrNoCompiler is why a call with a schema is refused by a process that
// was given no Compiler.
var ErrNoCompiler = errors.New("output schemas are not validated by this binary (brood-child runs only children that cannot delegate; brood validates them)")

// Schema is a compiled output schema and its text.
type Schema struct {
	raw json.RawMessage
	v   Validator
}

// CompileSchema compiles raw with c.
func CompileSchema(c Compiler, raw json.RawMessage) (*Schema, error) {
	if c == nil {
		return nil, ErrNoCompiler
	}
	v, err := c(raw)
	if err != nil {
		return nil, err
	}
	return &Schema{raw: raw, v: v}, nil
}

// Check finds the JSON answer in a child's final text and validates it. It
// returns the answer, or an error saying what was wrong, written for the
// child to fix.
func (s *Schema) Check(text string) (json.RawMessage, error) {
	raw, ok := extractJSON(text)
	if !ok {
		return nil, errors.New("your final answer holds no JSON value: end it with one ```json block holding the answer")
	}
	if err := s.v.Validate(raw); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		raw = buf.Bytes()
	}
	return raw, nil
}

// Instruction is what a child is told about the answer its call expects.
func (s *Schema) Instruction() string {
	return "ANSWER FORMAT: end your final answer with one ```json block holding a single JSON value that validates against this JSON Schema:\n" + string(s.raw)
}

// extractJSON finds the answer: the last ```json (or bare ```) block, else
// the whole text, else the last balanced {...} or [...] span.
func extractJSON(text string) ([]byte, bool) {
	if blk, ok := lastFence(text); ok && json.Valid([]byte(blk)) {
		return []byte(blk), true
	}
	t := strings.TrimSpace(text)
	if json.Valid([]byte(t)) && t != "" {
		return []byte(t), true
	}
	for i := len(t) - 1; i >= 0; i-- {
		if t[i] != '}' && t[i] != ']' {
			continue
		}
		for j := 0; j < i; j++ {
			if (t[j] == '{' || t[j] == '[') && json.Valid([]byte(t[j:i+1])) {
				return []byte(t[j : i+1]), true
			}
		}
		break
	}
	return nil, false
}

func lastFence(text string) (string, bool) {
	end := strings.LastIndex(text, "```")
	if end < 0 {
		return "", false
	}
	start := strings.LastIndex(text[:end], "```")
	if start < 0 {
		return "", false
	}
	body := text[start+3 : end]
	if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], "{[\"") {
		body = body[nl+1:] // the info string: json, JSON, ...
	}
	return strings.TrimSpace(body), true
}

// loop is a call's schema check and retries around its attempts.
type loop struct {
	s       Spec
	sch     *Schema // nil: no schema, one attempt
	retries int
}

// newLoop compiles s's schema with c (none: a plain call).
func newLoop(c Compiler, s Spec) (*loop, error) {
	l := &loop{s: s}
	if len(s.Schema) == 0 {
		return l, nil
	}
	sch, err := CompileSchema(c, s.Schema)
	if err != nil {
		return nil, err
	}
	l.sch, l.retries = sch, s.Retries
	if l.retries == 0 {
		l.retries = DefaultRetries
	}
	return l, nil
}

// first is the spec of the first attempt: with a schema, the child is told
// the answer's format (a resume's follow-up is not: its task was told).
func (l *loop) first() Spec {
	s := l.s
	if l.sch != nil && (s.Resume == "" || s.Continue) {
		s.Prompt += "\n\n" + l.sch.Instruction()
	}
	return s
}

// run finishes the prepared first attempt and checks its answer: one that
// does not validate is sent back to the same task (resumed, its transcript
// intact) with what was wrong, up to the retries. A call that ends in
// anything but done is not retried: its result stands as it is. A retry
// that cannot start (its task is held, the caller is cancelled) is an
// error, with the last result.
func (l *loop) run(ctx context.Context, lc Local, s Spec, p *prepared) (*Result, error) {
	r := p.finish(ctx)
	for n := 1; ; n++ {
		// Every attempt after the first resumes the same task, whose
		// usage already counts all of its runs: not added up again.
		r.Attempts = n
		if l.sch == nil || r.Status != StatusDone || len(r.Failures) > 0 {
			return r, nil
		}
		out, why := l.sch.Check(r.Summary)
		if why == nil {
			r.Output = out
			return r, nil
		}
		if n > l.retries || ctx.Err() != nil {
			r.Failures = append(r.Failures, fmt.Sprintf("%s after %d retries: %v", InvalidOutput, n-1, why))
			return r, nil
		}
		s.Resume, s.Continue, s.TaskID = r.TaskID, false, ""
		s.Prompt = fmt.Sprintf("Your answer was rejected: %v\n\nAnswer again, ending with one ```json block that validates against the schema. %s", why, l.sch.Instruction())
		next, err := attempt(ctx, lc, s)
		if err != nil {
			r.Failures = append(r.Failures, fmt.Sprintf("%s, and the retry could not start: %v (%v)", InvalidOutput, err, why))
			return r, err
		}
		r = next
	}
}
