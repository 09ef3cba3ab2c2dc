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
	t, err := telemetry.Setup(ctx, f.Getenv)
	if err != nil {
		fmt.Fprintln(f.Err, "brood: telemetry is off:", err)
		return nil, func() {}
	}
	if t == nil {
		return nil, func() {}
	}
	return t, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			fmt.Fprintln(f.Err, "brood: telemetry: could not export everything:", err)
		}
	}
}
