package spawntrace

import (
	"cmp"
	"context"
	"slices"
)

// The root's own start, traced the same way: from the instant the process
// that started it took just before its exec (RootEnvVar) to the root's
// first model request, every stage owned by the mark that ends it.

// RootEnvVar carries, into a root, the CLOCK_MONOTONIC instant its starter
// (brood bench) took just before the exec; set, the root traces its own
// start.
const RootEnvVar = "BROOD_SPAWNTRACE_ROOT"

// RootFileSuffix ends the name of a root's record, written beside its
// transcript: <session id> + RootFileSuffix.
const RootFileSuffix = ".spawntrace.json"

type rootKey struct{}

// Root begins a root's trace of its own start when getenv(RootEnvVar)
// holds its starter's instant (ctx unchanged otherwise), and marks
// "main": the runtime and every package initialiser have run.
func Root(ctx context.Context, getenv func(string) string) context.Context {
	if t := started(getenv(RootEnvVar), "main"); t != nil {
		return context.WithValue(ctx, rootKey{}, t)
	}
	return ctx
}

// RootMark records the end of one of the root's own stages now, if ctx
// carries the root's trace (a dispatch's marks are Mark's: the two never
// mix).
func RootMark(ctx context.Context, stage string) {
	if t, _ := ctx.Value(rootKey{}).(*Trace); t != nil {
		t.mark(stage)
	}
}

// WriteRoot writes ctx's root trace into dir as name (tmp+rename), if ctx
// carries one.
func WriteRoot(ctx context.Context, dir, name string) error {
	t, _ := ctx.Value(rootKey{}).(*Trace)
	if t == nil {
		return nil
	}
	return t.write(dir, name)
}

// RootStages are a root's stages from its starter's instant (rec.Start)
// to its exit: its marks, then "first request" to first (its first model
// request as the model saw it), "model" to answered (the model's last
// byte of that answer) and "exit" to exited (its starter saw it end). An
// instant that is 0 is unknown and its stage left out; a mark after the
// first request (a root ends its run after the model answered) is placed
// in time order, so the stages sum to exited − rec.Start.
func RootStages(rec Record, first, answered, exited int64) []Stage {
	marks := slices.Clone(rec.Marks)
	for _, p := range []Point{{"first request", first}, {"model", answered}, {"exit", exited}} {
		if p.At > 0 {
			marks = append(marks, p)
		}
	}
	slices.SortStableFunc(marks, func(a, b Point) int { return cmp.Compare(a.At, b.At) })
	prev := rec.Start
	out := make([]Stage, 0, len(marks))
	for _, m := range marks {
		out = append(out, Stage{Name: m.Stage, Dur: m.At - prev})
		prev = m.At
	}
	return out
}
