package depth

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestMarkerRoundTrip(t *testing.T) {
	tests := []struct {
		m    Marker
		want string
	}{
		{Marker{Task: "01J0ABCDEF", Depth: 1, Max: 2}, "brood-01J0ABCDEF-d1-m2"},
		{Marker{Task: "a-b/c", Depth: 3, Max: 3}, "brood-a_b_c-d3-m3"},
	}
	for _, tt := range tests {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		got, ok := Parse("/sys/fs/cgroup/brood/" + tt.want)
		if !ok || got.Depth != tt.m.Depth || got.Max != tt.m.Max {
			t.Errorf("Parse(%q) = %+v %v", tt.want, got, ok)
		}
	}
	for _, bad := range []string{"brood", "/usr/bin/brood", "brood-X-d0-m2", "brood-X-dx-m2", "brood-X-d1", "brood--d1-m1", "xbrood-X-d1-m1"} {
		if m, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) = %+v, want no marker", bad, m)
		}
	}
}

func TestDecide(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	mk := func(d, m int) Found {
		return Found{Marker: Marker{Task: "T" + strconv.Itoa(d), Depth: d, Max: m}, From: SourceAncestry}
	}
	tests := []struct {
		name       string
		found      []Found
		getenv     func(string) string
		depth, max int
		below      bool
	}{
		{"root takes the settings' cap", nil, env(), 0, 2, false},
		// Issue 10 case 8: the stamps in a root's own environment count for nothing.
		{"root ignores a raised max stamp", nil, env(EnvMaxDepth, "5"), 0, 2, false},
		{"root ignores a depth stamp", nil, env(EnvDepth, "1", EnvMaxDepth, "1"), 0, 2, false},
		{"stripped env below a child at the cap", []Found{mk(2, 2)}, env(), 2, 2, true},
		{"raised stamps below a child don't help", []Found{mk(1, 2)}, env(EnvDepth, "0", EnvMaxDepth, "9"), 1, 2, true},
		{"stamps may make it stricter", []Found{mk(1, 3)}, env(EnvDepth, "2", EnvMaxDepth, "2"), 2, 2, true},
		{"a forged shallower marker doesn't help", []Found{mk(0+1, 50), mk(2, 2)}, env(), 2, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.found, 2, tt.getenv)
			if d.Depth != tt.depth || d.Max != tt.max || d.Below != tt.below {
				t.Errorf("Decide = %+v, want depth %d max %d below %v", d, tt.depth, tt.max, tt.below)
			}
		})
	}
}

// TestScanAncestry starts a process whose argv[0] is a marker, which starts
// another with an empty environment; the grandchild must find the marker.
func TestScanAncestry(t *testing.T) {
	if os.Getenv("DEPTH_TEST_SCAN") == "1" {
		d := Current(7, os.Getenv)
		os.Stdout.WriteString(strconv.Itoa(d.Depth) + " " + strconv.Itoa(d.Max) + " " + strconv.FormatBool(d.Below) + "\n")
		return
	}
	if os.Getenv("DEPTH_TEST_SCAN") == "parent" {
		exe, _ := os.Executable()
		c := exec.Command(exe, "-test.run=^TestScanAncestry$")
		c.Env = []string{"DEPTH_TEST_SCAN=1"}
		c.Stdout = os.Stdout
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := Current(7, func(string) string { return "" }); got.Below {
		t.Skipf("the test itself runs below a brood child (%+v)", got)
	}
	c := exec.Command(os.Args[0], "-test.run=^TestScanAncestry$")
	c.Args[0] = Marker{Task: "TESTTASK", Depth: 2, Max: 3}.String()
	c.Env = append(os.Environ(), "DEPTH_TEST_SCAN=parent")
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "2 3 true\n") {
		t.Errorf("grandchild decided %q, want depth 2 max 3 below", out)
	}
}
