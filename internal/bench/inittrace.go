package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// InitCost is what package initialisers cost one binary's start
// (GODEBUG=inittrace=1): the median over runs of their summed clock time
// and allocated bytes, and the heaviest packages (each its least clock
// time over the runs, so a preempted run does not name the wrong one).
type InitCost struct {
	Binary   string
	Clock    time.Duration
	Bytes    int64
	Heaviest []PackageInit
}

// PackageInit is one package's initialiser.
type PackageInit struct {
	Package string
	Clock   time.Duration
	Bytes   int64
}

// initCost runs argv n times with GODEBUG=inittrace=1 (an exit status of
// okExit counts as success: brood-child without arguments exits 2).
func initCost(ctx context.Context, n int, env []string, okExit int, argv ...string) (InitCost, error) {
	c := InitCost{Binary: strings.Join(argv, " ")}
	var clocks []time.Duration
	var bytesPer []int64
	least := map[string]PackageInit{}
	for range n {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(slices.Clone(env), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == okExit) {
			return c, err
		}
		pkgs := parseInitTrace(stderr.Bytes())
		var clock time.Duration
		var b int64
		for _, p := range pkgs {
			clock += p.Clock
			b += p.Bytes
			if l, ok := least[p.Package]; !ok || p.Clock < l.Clock {
				least[p.Package] = p
			}
		}
		clocks, bytesPer = append(clocks, clock), append(bytesPer, b)
	}
	c.Clock, c.Bytes = median(clocks), medianInt(bytesPer)
	for _, p := range least {
		c.Heaviest = append(c.Heaviest, p)
	}
	slices.SortFunc(c.Heaviest, func(a, b PackageInit) int { return int(b.Clock - a.Clock) })
	c.Heaviest = c.Heaviest[:min(len(c.Heaviest), 6)]
	return c, nil
}

// parseInitTrace reads GODEBUG=inittrace=1 lines:
// "init PKG @T ms, CLOCK ms clock, BYTES bytes, ALLOCS allocs".
func parseInitTrace(b []byte) []PackageInit {
	var out []PackageInit
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		clock, err1 := strconv.ParseFloat(f[4], 64)
		by, err2 := strconv.ParseInt(f[7], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, PackageInit{Package: f[1], Clock: time.Duration(clock * float64(time.Millisecond)), Bytes: by})
	}
	return out
}
