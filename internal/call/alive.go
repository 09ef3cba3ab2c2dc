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

type turnKey struct{}

// WithTurn returns a context whose call's child stops at every turn
// boundary (before each model request after its first) until f returns:
// everything the child did so far is in its transcript then, and f makes
// it durable where a retry elsewhere finds it (a Temporal worker uploads
// the transcript and records it in a heartbeat the server has), so a call
// killed at any moment is continued from its last finished turn, never
// asks a finished turn again. f gets the call's context and the child's
// word for the turn's number; it must return when ctx ends.
func WithTurn(ctx context.Context, f func(ctx context.Context, turn int)) context.Context {
	return context.WithValue(ctx, turnKey{}, f)
}

// TurnFunc is the function WithTurn put in ctx (nil: none; the child does
// not stop at turn boundaries).
func TurnFunc(ctx context.Context) func(context.Context, int) {
	f, _ := ctx.Value(turnKey{}).(func(context.Context, int))
	return f
}
