package cmdutil

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/childexe"
	"github.com/broodhq/brood/internal/telemetry"
)

// StartTelemetry starts OpenTelemetry export when the OTEL_EXPORTER_OTLP_*
// variables ask for it (nil otherwise: nothing is built). A problem is a
// warning, never a failed run. stop flushes what is pending, for at most a
// few seconds.
func (f *Factory) StartTelemetry(ctx context.Context) (*telemetry.Telemetry, func()) {
	setup := f.Links.Telemetry
	if setup == nil {
		// brood and the lean child binaries export nothing: brood hands an
		// agent run to brood-fleet when telemetry is on (HandOffTelemetry),
		// so this is said only when brood-fleet is missing, not hidden.
		if f.telemetryOn() {
			why := "install brood-fleet beside brood: go install github.com/broodhq/brood/cmd/...@latest"
			if _, err := findFleet(); err != nil {
				why = err.Error()
			}
			fmt.Fprintf(f.Err, "brood: telemetry is off: this binary links no OpenTelemetry exporter (%s does; it %s)\n", childexe.NameFleet, why)
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
	t.SetRedact(f.Redactor.Redact) // no span carries a secret to the collector
	return t, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			fmt.Fprintln(f.Err, "brood: telemetry: could not export everything:", err)
		}
	}
}

// HandOffTelemetry runs brood-fleet in this process's place (as
// HandOffFleet does) when the environment asks for OpenTelemetry export
// and this binary links no exporter: brood does not, for the exporters
// (OTLP over HTTP too) link gRPC, whose golang.org/x/net/trace executes
// html/template, which keeps every exported method of every type in the
// binary. Called for a command that runs agents, before it writes
// anything. Without brood-fleet the command goes on here and says that
// telemetry is off (StartTelemetry).
func (f *Factory) HandOffTelemetry(cmd *cobra.Command) error {
	if f.Links.Telemetry != nil || !f.telemetryOn() {
		return nil
	}
	c, err := findFleet()
	if err != nil {
		return nil
	}
	argv := append([]string{os.Args[0]}, f.Args...)
	if err := syscall.Exec(c, argv, os.Environ()); err != nil {
		return ExitCode(ExitFailed, fmt.Errorf("%s: run %s: %w", cmd.CommandPath(), c, err))
	}
	return nil // not reached
}
