package spawn

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/limits"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
)

// TestChildLimits: the settings' limits under a definition's own; a
// project definition the user has not trusted may only lower them, and
// the note names what was held back.
func TestChildLimitsFromDefinition(t *testing.T) {
	s := settings.Defaults()
	s.Limits.Memory = "2GiB"
	base := limits.Defaults().Over(limits.Set{Memory: 2 << 30})
	for _, c := range []struct {
		name    string
		source  registry.Source
		trusted bool
		def     limits.Set
		want    limits.Set
		note    string
	}{
		{"none of its own", registry.SourceProject, false, limits.Set{}, base, ""},
		{"user raises", registry.SourceUser, false, limits.Set{Memory: 8 << 30}, base.Over(limits.Set{Memory: 8 << 30}), ""},
		{"project lowers", registry.SourceProject, false, limits.Set{Processes: 100}, base.Over(limits.Set{Processes: 100}), ""},
		{"untrusted project raises", registry.SourceProject, false, limits.Set{Memory: 8 << 30, Processes: 100}, base.Over(limits.Set{Processes: 100}), "limits memory not raised: a.md is a project file"},
		{"trusted project raises", registry.SourceProject, true, limits.Set{Memory: 8 << 30}, base.Over(limits.Set{Memory: 8 << 30}), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &Dispatcher{cfg: Config{Settings: s, TrustProject: func(string) bool { return c.trusted }}}
			got, note := d.childLimits(&registry.Definition{Name: "a", Path: "a.md", Source: c.source, Limits: c.def})
			if got != c.want || (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
				t.Errorf("childLimits = %+v %q; want %+v %q", got, note, c.want, c.note)
			}
		})
	}
}

// TestChildNetwork: a read-only built-in's tools get no network unless its
// definition says so; other agents get it unless theirs says none.
func TestChildNetwork(t *testing.T) {
	on, off := true, false
	for _, c := range []struct {
		source   registry.Source
		readOnly bool
		def      *bool
		want     *bool
	}{
		{registry.SourceBuiltin, true, nil, &off},
		{registry.SourceBuiltin, false, nil, nil},
		{registry.SourceProject, true, nil, nil},
		{registry.SourceProject, true, &off, &off},
		{registry.SourceBuiltin, true, &on, &on},
	} {
		got := childNetwork(&registry.Definition{Source: c.source, Network: c.def}, c.readOnly)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%s read-only %v def %v: %v, want %v", c.source, c.readOnly, c.def, got, c.want)
		}
	}
}
