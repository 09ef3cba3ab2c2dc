// Package limits is what a child may consume: memory, processes, open files
// and the bytes of command output it may keep on disk. A Set is resolved
// from the built-in defaults, the [limits] settings and an agent
// definition's `limits:` frontmatter; the pool enforces it (a cgroup where
// the machine gives one, rlimits otherwise) and the Bash tool keeps its
// spilled output within Output.
//
// This package is a leaf: it parses and renders, and enforces nothing.
package limits

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Unlimited is the value of a field that sets no limit ("unlimited").
const Unlimited = -1

// Set is one child's limits. A zero field is unset (the next layer down
// decides); Unlimited lifts the limit.
type Set struct {
	// Memory is the bytes of memory (RAM, page cache charged to it
	// included) the child and everything it starts may use together.
	Memory int64 `json:"memory,omitempty"`
	// Processes is how many processes and threads the child and everything
	// it starts may have at once.
	Processes int64 `json:"processes,omitempty"`
	// Files is the open-file limit (RLIMIT_NOFILE) of every process in the
	// child's tree.
	Files int64 `json:"files,omitempty"`
	// Output is the bytes of spilled command output the child may keep on
	// disk at once, over all its commands.
	Output int64 `json:"output,omitempty"`
	// FileSize is the largest file any process in the child's tree may
	// write (RLIMIT_FSIZE): a write past it fails (EFBIG; a process that
	// does not handle SIGXFSZ is ended by it). It bounds each file, not
	// the total nor the number of files.
	FileSize int64 `json:"file_size,omitempty"`
}

// Defaults are the limits of a child that nothing else configures. They
// were measured (docs/performance.md "Limits"): five children each running
// `go build ./...` and then `go test` of brood at once stay well inside
// them, while a fork bomb or a runaway allocation is stopped long before it
// takes the machine.
func Defaults() Set {
	return Set{Memory: 4 << 30, Processes: 2048, Files: 8192, Output: 64 << 20, FileSize: 1 << 30}
}

// Fields are the keys of a Set, in the order they are shown.
var Fields = []string{"memory", "processes", "files", "output", "file_size"}

// Over returns s with every field that o sets replaced by o's.
func (s Set) Over(o Set) Set {
	for _, k := range Fields {
		if v := o.Get(k); v != 0 {
			s.set(k, v)
		}
	}
	return s
}

// Lower returns s with every field that o sets lowered to o's, never
// raised: what a definition the user did not write may do.
func (s Set) Lower(o Set) (Set, []string) {
	var raised []string
	for _, k := range Fields {
		v := o.Get(k)
		if v == 0 {
			continue
		}
		if Below(v, s.Get(k)) || v == s.Get(k) {
			s.set(k, v)
		} else {
			raised = append(raised, k)
		}
	}
	return s, raised
}

// Below reports whether limit a is stricter than limit b (0 counts as
// unset, so nothing is below it and it is below nothing).
func Below(a, b int64) bool {
	switch {
	case a == 0 || b == 0 || a == Unlimited:
		return false
	case b == Unlimited:
		return true
	}
	return a < b
}

// Get returns a field by its key.
func (s Set) Get(key string) int64 {
	switch key {
	case "memory":
		return s.Memory
	case "processes":
		return s.Processes
	case "files":
		return s.Files
	case "output":
		return s.Output
	case "file_size":
		return s.FileSize
	}
	return 0
}

func (s *Set) set(key string, v int64) {
	switch key {
	case "memory":
		s.Memory = v
	case "processes":
		s.Processes = v
	case "files":
		s.Files = v
	case "output":
		s.Output = v
	case "file_size":
		s.FileSize = v
	}
}

// Parse reads one field's value as written in settings or frontmatter:
// sizes (memory, output) as "2GiB", "512MiB", "64M", a byte count, or
// "unlimited"; counts (processes, files) as a whole number or "unlimited".
// The error says what is wrong and what to write.
func Parse(key, value string) (int64, error) {
	v := strings.TrimSpace(value)
	if strings.EqualFold(v, "unlimited") || strings.EqualFold(v, "none") {
		return Unlimited, nil
	}
	var n int64
	var err error
	switch key {
	case "memory", "output", "file_size":
		n, err = parseSize(v)
	case "processes", "files":
		n, err = strconv.ParseInt(v, 10, 64)
		if err != nil {
			err = fmt.Errorf("%q is not a whole number (or \"unlimited\")", v)
		}
	default:
		return 0, fmt.Errorf("unknown limit %q: the limits are %s", key, strings.Join(Fields, ", "))
	}
	if err != nil {
		return 0, fmt.Errorf("limits.%s: %v", key, err)
	}
	if lo := minimum(key); n < lo {
		return 0, fmt.Errorf("limits.%s: %s is below the least a child can run with (%s); raise it or write \"unlimited\"", key, v, Format(key, lo))
	}
	return n, nil
}

// minimum is the least value of a field a brood child can work with: the
// Go runtime alone needs a few threads and some memory.
func minimum(key string) int64 {
	switch key {
	case "memory":
		return 64 << 20
	case "processes":
		return 16
	case "files":
		return 64
	case "file_size":
		return 1 << 20 // a child's own transcript and result
	}
	return 0
}

var units = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000}, {"tb", 1000 * 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"b", 1},
}

// parseSize reads "2GiB", "1.5G", "512MiB", "64m", "1000000".
func parseSize(v string) (int64, error) {
	low := strings.ToLower(strings.ReplaceAll(v, " ", ""))
	mult := int64(1)
	for _, u := range units {
		if num, ok := strings.CutSuffix(low, u.suffix); ok {
			low, mult = num, u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(low, 64)
	if err != nil || f < 0 || f*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a size: write a number with a unit, such as 2GiB, 512MiB or 64M (or \"unlimited\")", v)
	}
	return int64(f * float64(mult)), nil
}

// Format renders one field's value for people: "2 GiB", "512", "unlimited".
func Format(key string, v int64) string {
	switch {
	case v == Unlimited:
		return "unlimited"
	case v == 0:
		return "unset"
	case key == "memory" || key == "output" || key == "file_size":
		return Size(v)
	}
	return strconv.FormatInt(v, 10)
}

// Size renders a byte count with the largest binary unit that keeps it
// readable: "2 GiB", "1.5 GiB", "512 MiB", "700 B".
func Size(n int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult {
			s := strconv.FormatFloat(float64(n)/float64(u.mult), 'f', 1, 64)
			return strings.TrimSuffix(s, ".0") + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}

// String renders the set on one line: "memory 4 GiB, processes 2048, ...".
func (s Set) String() string {
	var parts []string
	for _, k := range Fields {
		if v := s.Get(k); v != 0 {
			parts = append(parts, k+" "+Format(k, v))
		}
	}
	if len(parts) == 0 {
		return "none set"
	}
	return strings.Join(parts, ", ")
}

// FromMap reads a Set from key/value pairs (frontmatter's `limits:`
// mapping, values as written). Every bad entry is one error naming it.
func FromMap(m map[string]string) (Set, error) {
	var s Set
	var errs []error
	for k, v := range m {
		n, err := Parse(strings.ToLower(strings.TrimSpace(k)), v)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.set(strings.ToLower(strings.TrimSpace(k)), n)
	}
	return s, errors.Join(errs...)
}
