package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/broodhq/brood/internal/limits"
)

// limitsField reads `limits:` — a mapping of memory, processes, files and
// output to values ("2GiB", 512, unlimited). A bad entry is an error
// naming the line and the key: a limit the author meant must never be
// dropped silently.
func (p *parsing) limitsField(d *Definition, f *field) {
	m, ok := f.value.(map[string]any)
	if !ok {
		p.errorf(f.line, "limits: want a mapping such as {memory: 2GiB, processes: 512, files: 4096, output: 64MiB}")
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		key := strings.ToLower(strings.TrimSpace(k))
		n, err := limits.Parse(key, fmt.Sprint(m[k]))
		if err != nil {
			p.errorf(f.line, "%v", err)
			continue
		}
		d.Limits = d.Limits.Over(limitOf(key, n))
	}
}

func limitOf(key string, n int64) limits.Set {
	var s limits.Set
	switch key {
	case "memory":
		s.Memory = n
	case "processes":
		s.Processes = n
	case "files":
		s.Files = n
	case "output":
		s.Output = n
	case "file_size":
		s.FileSize = n
	}
	return s
}

// network reads `network:` — none (or false: the agent's tool processes,
// Bash and all it starts, get no network) or on (or true). The child's own
// connection to its model is never cut.
func (p *parsing) network(d *Definition, f *field) {
	var on bool
	switch v := f.value.(type) {
	case bool:
		on = v
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "on", "true", "yes":
			on = true
		case "none", "off", "false", "no":
			on = false
		default:
			p.errorf(f.line, "network: %q is not none or on", v)
			return
		}
	default:
		p.errorf(f.line, "network: %v is not none or on", f.value)
		return
	}
	d.Network = &on
}
