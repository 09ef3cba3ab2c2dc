package call

import "context"

type aliveKey struct{}

// WithAlive returns a context whose call tells f each time its child shows
// it is alive (every line it prints, its heartbeat pings included). A
// remote caller passes these on: a Temporal worker turns them into its
// activity's heartbeats, so a silent child is seen on the fleet too.
func WithAlive(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, aliveKey{}, f)
}

// AliveFunc is the function WithAlive put in ctx (nil: none).
func AliveFunc(ctx context.Context) func() {
	f, _ := ctx.Value(aliveKey{}).(func())
	return f
}
