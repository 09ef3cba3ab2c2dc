package cmdutil

import (
	"reflect"
	"testing"

	"github.com/spf13/pflag"
)

// TestStringArrayAsPflag: StringArrayVar's flag parses, reads back
// (GetStringArray, String) and shows in the help as pflag's own
// StringArrayVar's does, two flags on one variable included.
func TestStringArrayAsPflag(t *testing.T) {
	for _, tc := range []struct {
		name string
		def  []string
		args []string
	}{
		{"unset", nil, nil},
		{"unset with a default", []string{"x", "y,z"}, nil},
		{"once", nil, []string{"--a", "one,two"}},
		{"repeated over a default", []string{"d"}, []string{"--a", "1", "--a", `q"uote`, "--a="}},
		{"two flags, one variable", nil, []string{"--a", "1", "--b", "2", "--a", "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var theirs, ours []string
			fsT, fsO := pflag.NewFlagSet("t", pflag.ContinueOnError), pflag.NewFlagSet("o", pflag.ContinueOnError)
			fsT.StringArrayVar(&theirs, "a", tc.def, "the a `list`")
			fsT.StringArrayVar(&theirs, "b", nil, "as --a")
			StringArrayVar(fsO, &ours, "a", tc.def, "the a `list`")
			StringArrayVar(fsO, &ours, "b", nil, "as --a")
			if errT, errO := fsT.Parse(tc.args), fsO.Parse(tc.args); errT != nil || errO != nil {
				t.Fatalf("parse: pflag %v, ours %v", errT, errO)
			}
			if !reflect.DeepEqual(ours, theirs) {
				t.Errorf("value %#v, pflag's %#v", ours, theirs)
			}
			for _, name := range []string{"a", "b"} {
				gotT, errT := fsT.GetStringArray(name)
				gotO, errO := fsO.GetStringArray(name)
				if errT != nil || errO != nil || !reflect.DeepEqual(gotO, gotT) {
					t.Errorf("GetStringArray(%s) = %#v, %v; pflag's %#v, %v", name, gotO, errO, gotT, errT)
				}
				if o, th := fsO.Lookup(name).Value.String(), fsT.Lookup(name).Value.String(); o != th {
					t.Errorf("String(%s) = %q, pflag's %q", name, o, th)
				}
			}
			if o, th := fsO.FlagUsages(), fsT.FlagUsages(); o != th {
				t.Errorf("help:\n%s\npflag's:\n%s", o, th)
			}
		})
	}
}
