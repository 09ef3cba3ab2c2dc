package registry

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/limits"
)

func TestParseLimitsAndNetwork(t *testing.T) {
	on, off := true, false
	for _, c := range []struct {
		name, extra string
		limits      limits.Set
		network     *bool
		err         string // substring of the one expected error, with its line
	}{
		{"limits", "limits:\n  memory: 2GiB\n  processes: 512\n  files: unlimited\n  output: 8MiB\n", limits.Set{Memory: 2 << 30, Processes: 512, Files: limits.Unlimited, Output: 8 << 20}, nil, ""},
		{"limits flow", "limits: {memory: 1G}\n", limits.Set{Memory: 1 << 30}, nil, ""},
		{"limits bad size", "limits:\n  memory: lots\n", limits.Set{}, nil, `a.md:4: error: limits.memory: "lots" is not a size`},
		{"limits unknown key", "limits: {cpu: 2}\n", limits.Set{}, nil, `a.md:4: error: unknown limit "cpu"`},
		{"limits not a mapping", "limits: 2GiB\n", limits.Set{}, nil, "a.md:4: error: limits: want a mapping"},
		{"network none", "network: none\n", limits.Set{}, &off, ""},
		{"network on", "network: on\n", limits.Set{}, &on, ""},
		{"network false", "network: false\n", limits.Set{}, &off, ""},
		{"network bad", "network: maybe\n", limits.Set{}, nil, `a.md:4: error: network: "maybe" is not none or on`},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := "---\nname: a\ndescription: d\n" + c.extra + "---\nPrompt.\n"
			def, diags := Parse("a.md", []byte(file), SourceUser)
			if c.err != "" {
				var msgs []string
				for _, d := range diags {
					msgs = append(msgs, d.String())
				}
				if !HasErrors(diags) || !strings.Contains(strings.Join(msgs, "\n"), c.err) {
					t.Fatalf("want an error with %q, got %v", c.err, msgs)
				}
				return
			}
			if def == nil || len(diags) > 0 {
				t.Fatalf("did not load cleanly: %v", diags)
			}
			if def.Limits != c.limits {
				t.Errorf("limits = %+v, want %+v", def.Limits, c.limits)
			}
			if (def.Network == nil) != (c.network == nil) || (def.Network != nil && *def.Network != *c.network) {
				t.Errorf("network = %v, want %v", def.Network, c.network)
			}
		})
	}
}
