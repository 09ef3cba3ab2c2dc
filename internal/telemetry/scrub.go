package telemetry

import "sync/atomic"

// Scrub is the redaction every span passes before it is exported: its
// name, attributes, events and status message (the exporter's wrapper in
// package otlp applies it), so that a tool's error quoting a secret
// (Read's "file does not exist: /x/<token>") reaches no collector (red
// team 21 P2-4). The redactor is the process's, set once it is known
// (SetRedact); until then text passes as it is. Safe for concurrent use.
type Scrub struct {
	fn atomic.Pointer[func(string) string]
}

// String is s redacted.
func (sc *Scrub) String(s string) string {
	if sc == nil || s == "" {
		return s
	}
	if fn := sc.fn.Load(); fn != nil {
		return (*fn)(s)
	}
	return s
}

// UseScrub makes t redact with sc (what its exporter applies), and
// returns t.
func (t *Telemetry) UseScrub(sc *Scrub) *Telemetry {
	if t != nil {
		t.scrub = sc
	}
	return t
}

// SetRedact sets the redaction of every span t exports: the process's
// redactor (the environment's secrets, the project's .env values, the
// key formats).
func (t *Telemetry) SetRedact(redact func(string) string) {
	if t == nil || redact == nil {
		return
	}
	if t.scrub == nil {
		t.scrub = new(Scrub)
	}
	t.scrub.fn.Store(&redact)
}
