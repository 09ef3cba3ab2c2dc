package root

import (
	"context"
	"fmt"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/engine"
)

// FleetFlags say where the fleet is (cmdutil.FleetFlags).
type FleetFlags = cmdutil.FleetFlags

// OpenFleet is the Temporal engine, or ErrNoFleet when no fleet address
// is configured. The engine is linked in brood-fleet (cmdutil.Fleet), to
// which brood hands every command that needs it (HandOffFleet); in a
// binary without it, the error says what to install.
func OpenFleet(ctx context.Context, f *cmdutil.Factory, fl FleetFlags) (engine.Engine, func(), error) {
	if !fl.Configured(f) {
		return nil, nil, ErrNoFleet
	}
	link, err := f.FleetLink()
	if err != nil {
		return nil, nil, err
	}
	e, closeFn, err := link.Engine(ctx, f, fl)
	if err != nil {
		return nil, nil, err
	}
	eng, ok := e.(engine.Engine)
	if !ok {
		closeFn()
		return nil, nil, fmt.Errorf("the fleet's engine is a %T, not an engine.Engine", e)
	}
	return eng, closeFn, nil
}
