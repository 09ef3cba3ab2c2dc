package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/broodhq/brood/internal/telemetry"
)

// startTelemetry starts OpenTelemetry export when the OTEL_EXPORTER_OTLP_*
// variables ask for it (nil otherwise: nothing is built). A problem is a
// warning, never a failed run. stop flushes what is pending, for at most a
// few seconds.
func (a *App) startTelemetry(ctx context.Context) (*telemetry.Telemetry, func()) {
	t, err := telemetry.Setup(ctx, a.Getenv)
	if err != nil {
		fmt.Fprintln(a.Err, "brood: telemetry is off:", err)
		return nil, func() {}
	}
	if t == nil {
		return nil, func() {}
	}
	return t, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			fmt.Fprintln(a.Err, "brood: telemetry: could not export everything:", err)
		}
	}
}
