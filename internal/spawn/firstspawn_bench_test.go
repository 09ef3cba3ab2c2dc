package spawn_test

import (
	"os"
	"slices"
	"testing"
	"time"
)

// BenchmarkFirstSpawn is a root dispatcher's first child, each time in a
// new project with a new dispatcher (what a `brood run` with one subagent
// pays): the parent's CPU (this process: its records, its spawn, and
// whatever it does once per run before its first child, such as a probe
// of the kernel) and the median from the Task call to the child's first
// progress event.
//
//	go test ./internal/spawn -run '^$' -bench FirstSpawn -benchtime 40x
func BenchmarkFirstSpawn(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	var spawns []time.Duration
	for b.Loop() {
		c, _, sp := fanOutOnce(b, exe, 1)
		cpu, spawns = cpu+c, append(spawns, sp...)
	}
	slices.Sort(spawns)
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "parent-cpu-ms/op")
	b.ReportMetric(float64(spawns[len(spawns)/2].Microseconds())/1000, "spawn-median-ms")
}
