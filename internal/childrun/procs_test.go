package childrun

import (
	"runtime"
	"testing"
)

func TestLeanProcs(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	for _, tc := range []struct {
		name, env string
		start     int
		want      int
	}{
		{"default: one P", "", 4, 1},
		{"the user's GOMAXPROCS is kept", "3", 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GOMAXPROCS(tc.start)
			LeanProcs(func(k string) string {
				if k == "GOMAXPROCS" {
					return tc.env
				}
				return ""
			})
			if got := runtime.GOMAXPROCS(0); got != tc.want {
				t.Fatalf("GOMAXPROCS %d, want %d", got, tc.want)
			}
		})
	}
}
