package delegate

import "context"

type eventsKey struct{}

// WithEvents returns a context under which a Dispatch (or Resume) also
// reports its own events — start, progress, stop and its descendants'
// relayed events — to fn, besides Config.OnEvent. A caller serving several
// dispatches at once (the MCP server) tells them apart this way.
func WithEvents(ctx context.Context, fn func(Event)) context.Context {
	return context.WithValue(ctx, eventsKey{}, fn)
}

// emitter is the event sink of one dispatch running under ctx.
func (d *Dispatcher) emitter(ctx context.Context) func(Event) {
	fn, _ := ctx.Value(eventsKey{}).(func(Event))
	if fn == nil {
		return d.emit
	}
	return func(e Event) {
		if e.Parent == "" {
			e.Parent = d.cfg.ParentTaskID
		}
		fn(e)
		d.emit(e)
	}
}

// Stop cancels a background task this dispatcher started: it is stopped in
// stages and recorded as cancelled (and stays resumable). It reports false
// for a task this dispatcher does not run or that has already finished.
func (d *Dispatcher) Stop(id string) bool {
	d.bg.mu.Lock()
	b := d.bg.tasks[id]
	d.bg.mu.Unlock()
	if b == nil || b.cancel == nil {
		return false
	}
	select {
	case <-b.done:
		return false
	default:
	}
	b.cancel()
	return true
}
