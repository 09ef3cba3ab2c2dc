package workflow

import "encoding/json"

// RedactValue is v (a decoded JSON value: maps, slices, strings, numbers)
// with redact applied to every string in it, map keys kept; v itself is
// not changed. What a run writes to disk (its plan, inputs and journal)
// carries no secret that was in a plan's input or a --input value
// (docs/secrets.md).
func RedactValue(v any, redact func(string) string) any {
	if redact == nil {
		return v
	}
	switch t := v.(type) {
	case string:
		return redact(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = RedactValue(e, redact)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = RedactValue(e, redact)
		}
		return out
	case []string:
		out := make([]string, len(t))
		for i, e := range t {
			out[i] = redact(e)
		}
		return out
	case json.RawMessage:
		var d any
		if json.Unmarshal(t, &d) != nil {
			return json.RawMessage(redact(string(t)))
		}
		b, err := json.Marshal(RedactValue(d, redact))
		if err != nil {
			return t
		}
		return json.RawMessage(b)
	}
	return v
}

// redactLine is a journal line as it goes to disk: the texts of its
// record (error, failures, output) redacted.
func redactLine(l JournalLine, redact func(string) string) JournalLine {
	if redact == nil || l.Rec == nil {
		return l
	}
	rec := *l.Rec
	rec.Error = redact(rec.Error)
	if rec.Failures != nil {
		rec.Failures = make([]string, len(l.Rec.Failures))
		for i, f := range l.Rec.Failures {
			rec.Failures[i] = redact(f)
		}
	}
	rec.Output = RedactValue(rec.Output, redact)
	l.Rec = &rec
	return l
}
