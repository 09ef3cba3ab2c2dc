package spawn

// emitter is the event sink of one call: its own watcher's (call.Watch's
// Events), then Config.OnEvent.
func (d *Dispatcher) emitter(fn func(Event)) func(Event) {
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
