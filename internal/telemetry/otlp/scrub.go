package otlp

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/broodhq/brood/internal/telemetry"
)

// scrubExporter hands exp every span with its texts redacted by sc: the
// name, each string attribute, each event's name and attributes, the
// status message. Whatever sets them (brood's spans, a library's), no
// secret reaches the collector (red team 21 P2-4).
type scrubExporter struct {
	sdktrace.SpanExporter
	sc *telemetry.Scrub
}

func (e scrubExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	out := make([]sdktrace.ReadOnlySpan, len(spans))
	for i, s := range spans {
		out[i] = scrubbedSpan{s, e.sc}
	}
	return e.SpanExporter.ExportSpans(ctx, out)
}

// scrubbedSpan is a span with its texts redacted as they are read.
type scrubbedSpan struct {
	sdktrace.ReadOnlySpan
	sc *telemetry.Scrub
}

func (s scrubbedSpan) Name() string { return s.sc.String(s.ReadOnlySpan.Name()) }

func (s scrubbedSpan) Attributes() []attribute.KeyValue {
	return scrubAttrs(s.sc, s.ReadOnlySpan.Attributes())
}

func (s scrubbedSpan) Status() sdktrace.Status {
	st := s.ReadOnlySpan.Status()
	st.Description = s.sc.String(st.Description)
	return st
}

func (s scrubbedSpan) Events() []sdktrace.Event {
	evs := s.ReadOnlySpan.Events()
	out := make([]sdktrace.Event, len(evs))
	for i, ev := range evs {
		ev.Name, ev.Attributes = s.sc.String(ev.Name), scrubAttrs(s.sc, ev.Attributes)
		out[i] = ev
	}
	return out
}

// scrubAttrs are attrs with every string (and string slice) redacted.
func scrubAttrs(sc *telemetry.Scrub, attrs []attribute.KeyValue) []attribute.KeyValue {
	out := make([]attribute.KeyValue, len(attrs))
	for i, a := range attrs {
		switch a.Value.Type() {
		case attribute.STRING:
			a.Value = attribute.StringValue(sc.String(a.Value.AsString()))
		case attribute.STRINGSLICE:
			ss := a.Value.AsStringSlice()
			for j := range ss {
				ss[j] = sc.String(ss[j])
			}
			a.Value = attribute.StringSliceValue(ss)
		}
		out[i] = a
	}
	return out
}
