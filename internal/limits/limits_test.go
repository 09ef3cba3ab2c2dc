package limits

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		key, in string
		want    int64
		err     string
	}{
		{"memory", "2GiB", 2 << 30, ""},
		{"memory", "1.5G", 3 << 29, ""},
		{"memory", "512 MiB", 512 << 20, ""},
		{"memory", "100000000", 100000000, ""},
		{"memory", "1GB", 1000 * 1000 * 1000, ""},
		{"memory", "unlimited", Unlimited, ""},
		{"memory", "lots", 0, `limits.memory: "lots" is not a size`},
		{"memory", "-1G", 0, "is not a size"},
		{"memory", "1M", 0, "below the least a child can run with (64 MiB)"},
		{"output", "0", 0, ""},
		{"output", "8M", 8 << 20, ""},
		{"processes", "512", 512, ""},
		{"processes", "4", 0, "below the least"},
		{"processes", "1k", 0, "is not a whole number"},
		{"files", "None", Unlimited, ""},
		{"cpu", "1", 0, "unknown limit \"cpu\": the limits are memory, processes, files, output"},
	} {
		got, err := Parse(c.key, c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%s, %q) = %d, %v; want an error with %q", c.key, c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Parse(%s, %q) = %d, %v; want %d", c.key, c.in, got, err, c.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		key  string
		v    int64
		want string
	}{
		{"memory", 2 << 30, "2 GiB"},
		{"memory", 3 << 29, "1.5 GiB"},
		{"output", 64 << 20, "64 MiB"},
		{"output", 700, "700 B"},
		{"processes", 2048, "2048"},
		{"files", Unlimited, "unlimited"},
	} {
		if got := Format(c.key, c.v); got != c.want {
			t.Errorf("Format(%s, %d) = %q, want %q", c.key, c.v, got, c.want)
		}
	}
	if got := (Set{Memory: 1 << 30, Processes: 100}).String(); got != "memory 1 GiB, processes 100" {
		t.Errorf("String = %q", got)
	}
}

func TestOverAndLower(t *testing.T) {
	base := Defaults()
	over := base.Over(Set{Memory: 1 << 30, Files: Unlimited})
	if over.Memory != 1<<30 || over.Files != Unlimited || over.Processes != base.Processes {
		t.Errorf("Over = %+v", over)
	}
	for _, c := range []struct {
		name   string
		o      Set
		want   Set
		raised string
	}{
		{"lowers", Set{Memory: 1 << 30}, Set{Memory: 1 << 30, Processes: base.Processes, Files: base.Files, Output: base.Output, FileSize: base.FileSize}, ""},
		{"cannot raise", Set{Memory: 64 << 30, Processes: Unlimited}, base, "memory,processes"},
		{"limits an unlimited", Set{Files: 100}, Set{Memory: base.Memory, Processes: base.Processes, Files: 100, Output: base.Output, FileSize: base.FileSize}, ""},
	} {
		from := base
		if c.name == "limits an unlimited" {
			from.Files = Unlimited
		}
		got, raised := from.Lower(c.o)
		if got != c.want || strings.Join(raised, ",") != c.raised {
			t.Errorf("%s: Lower = %+v %v, want %+v %q", c.name, got, raised, c.want, c.raised)
		}
	}
}

func TestFromMap(t *testing.T) {
	s, err := FromMap(map[string]string{"Memory": "1GiB", "processes": "300"})
	if err != nil || s.Memory != 1<<30 || s.Processes != 300 {
		t.Fatalf("FromMap = %+v, %v", s, err)
	}
	if _, err := FromMap(map[string]string{"memory": "x", "files": "y"}); err == nil || !strings.Contains(err.Error(), "limits.memory") || !strings.Contains(err.Error(), "limits.files") {
		t.Fatalf("FromMap with two bad entries: %v", err)
	}
}
