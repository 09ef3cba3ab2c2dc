package cmdutil

import (
	"context"
	"fmt"
	"time"

	"github.com/broodhq/brood/internal/telemetry"
)

// StartTelemetry starts OpenTelemetry export when the OTEL_EXPORTER_OTLP_*
// variables ask for it (nil otherwise: nothing is built). A problem is a
// warning, never a failed run. stop flushes what is pending, for at most a
// few seconds.
func (f *Factory) StartTelemetry(ctx context.Context) (*telemetry.Telemetry, func()) {
	setup := f.Links.Telemetry
	if setup == nil {
		// A lean child binary exports nothing; its parent runs brood for
		// children when telemetry is on, so this is only said, not hidden.
		if c, err := telemetry.FromEnv(f.Getenv); err == nil && (c.Traces || c.Metrics) {
			fmt.Fprintln(f.Err, "brood: telemetry is off: this binary links no OpenTelemetry exporter (brood does)")
		}
		return nil, func() {}
	}
	t, err := setup(ctx, f.Getenv)
	if err != nil {
		fmt.Fprintln(f.Err, "brood: telemetry is off:", err)
		return nil, func() {}
	}
	if t == nil {
		return nil, func() {}
	}
	if p, err := f.Prices(); err == nil {
		t.SetPrices(p) // the cost metrics at the settings' [prices]
	}
	return t, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			fmt.Fprintln(f.Err, "brood: telemetry: could not export everything:", err)
		}
	}
}
