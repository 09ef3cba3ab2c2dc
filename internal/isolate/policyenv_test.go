//go:build linux

package isolate

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
)

// restrictChildEnv makes the test binary a child that calls RestrictChild
// for the envelope at this path and prints restrictChildOut.
const restrictChildEnv = "ISOLATE_TEST_RESTRICT_CHILD"

type restrictChildOut struct {
	Mechanism string `json:"mechanism"`
	Err       string `json:"err"`
	EnvLeft   bool   `json:"env_left"`
}

// restrictChildHelper is that child: its status, its error, and whether
// the parent's policy is still in its environment for a grandchild.
func restrictChildHelper(envelope string) int {
	var env dispatch.Envelope
	if err := dispatch.ReadJSON(envelope, &env); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 94
	}
	var out restrictChildOut
	st, err := RestrictChild(&env, filepath.Dir(envelope))
	out.Mechanism = st.Mechanism
	if err != nil {
		out.Err = err.Error()
	}
	_, out.EnvLeft = os.LookupEnv(EnvChildPolicy)
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return 0
}

// TestChildTakesItsParentsPolicy: a child confines itself by the policy
// its parent built for its task directory, not by one it builds again
// (which costs it ~1.4 ms: docs/performance.md); one passed for another
// task directory is refused; the entry is gone before anything the child
// starts; with none passed it builds its own. Each case runs the test
// binary as the child, a read-only explorer whose own policy needs
// Landlock: a passed policy that needs none shows which was used.
func TestChildTakesItsParentsPolicy(t *testing.T) {
	home := t.TempDir()
	root := Resolved(t.TempDir())
	td := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := td.Create(); err != nil {
		t.Fatal(err)
	}
	env := dispatch.Envelope{TaskID: td.ID(), ReadOnly: true, ProjectRoot: root, Workspace: root}
	envelope := filepath.Join(td.Path(), "envelope.json")
	if err := dispatch.WriteJSON(envelope, &env); err != nil {
		t.Fatal(err)
	}
	open := sandbox.Policy{Network: true} // nothing to confine
	for _, tc := range []struct {
		name          string
		entry         string // "": none passed
		wantMechanism string // "": its own, whatever the kernel gives but "none"
		wantErr       string
	}{
		{"the parent's policy", policyEntry(td.Path(), open, false, true, ReadDeny{Held: true}), "none", ""},
		{"for another task directory", policyEntry(filepath.Join(root, "other"), open, false, true, ReadDeny{Held: true}), "", fmt.Sprintf("not %q", td.Path())},
		{"not passed: its own", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), restrictChildEnv+"="+envelope, "HOME="+home)
			if tc.entry != "" {
				cmd.Env = append(cmd.Env, tc.entry)
			}
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("child: %v", err)
			}
			var out restrictChildOut
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatalf("child's output %q: %v", b, err)
			}
			if tc.wantErr != "" {
				if !strings.Contains(out.Err, tc.wantErr) {
					t.Errorf("error %q, want one naming %q", out.Err, tc.wantErr)
				}
			} else if out.Err != "" {
				t.Errorf("error %q", out.Err)
			}
			if tc.wantMechanism == "" && tc.wantErr == "" {
				if out.Mechanism == "none" || out.Mechanism == "" {
					t.Errorf("mechanism %q: a read-only child's own policy needs a sandbox", out.Mechanism)
				}
			} else if out.Mechanism != tc.wantMechanism {
				t.Errorf("mechanism %q, want %q", out.Mechanism, tc.wantMechanism)
			}
			if out.EnvLeft {
				t.Errorf("%s is still in the child's environment: a grandchild would inherit it", EnvChildPolicy)
			}
		})
	}
}

// TestPolicyEntryHoldsWhatOnlyTheParentKnows: the policy passed to a child
// that builds its own file-system layer holds the paths its parent hides
// and it could not find itself (the dispatcher's extra paths), and the
// host temporary directories still whole, for the child to split around
// what it keeps when it builds its rules (an entry made there in between
// is hidden too); a child confined whole from its starting thread gets no
// paths (its Restrict only reports).
func TestPolicyEntryHoldsWhatOnlyTheParentKnows(t *testing.T) {
	dir := t.TempDir()
	p := sandbox.Policy{ReadOnly: true, Writable: []string{dir}, Hidden: []string{"/run/token"}, HiddenAround: []string{"/tmp"}, Keep: []string{dir}}
	for _, tc := range []struct {
		name                 string
		withPaths            bool
		hidden, around, keep []string
	}{
		{"builds its layer", true, p.Hidden, p.HiddenAround, p.Keep},
		{"confined whole", false, nil, nil, nil},
	} {
		t.Setenv(EnvChildPolicy, strings.TrimPrefix(policyEntry(dir, p, true, tc.withPaths, ReadDeny{Held: true}), EnvChildPolicy+"="))
		got, needed, ok, err := takePolicy(dir)
		if err != nil || !ok || !needed {
			t.Fatalf("%s: takePolicy: ok %v, needed %v, err %v", tc.name, ok, needed, err)
		}
		if !slices.Equal(got.Hidden, tc.hidden) || !slices.Equal(got.HiddenAround, tc.around) || !slices.Equal(got.Keep, tc.keep) {
			t.Errorf("%s: Hidden %q HiddenAround %q Keep %q, want %q %q %q", tc.name, got.Hidden, got.HiddenAround, got.Keep, tc.hidden, tc.around, tc.keep)
		}
		if !got.ReadOnly || !slices.Equal(got.Writable, p.Writable) {
			t.Errorf("%s: ReadOnly %v Writable %q, want true %q", tc.name, got.ReadOnly, got.Writable, p.Writable)
		}
	}
}

// BenchmarkRestrictChild: a read-only child's CPU from its exec to its
// sandbox (the test binary as the child, RestrictChild, exit), with the
// policy its parent passed and building its own, alternated op by op.
// The difference is what the child no longer does (go test
// ./internal/isolate -run '^$' -bench RestrictChild -benchtime 40x).
func BenchmarkRestrictChild(b *testing.B) {
	home := b.TempDir()
	root := Resolved(b.TempDir())
	td := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := td.Create(); err != nil {
		b.Fatal(err)
	}
	env := dispatch.Envelope{TaskID: td.ID(), ReadOnly: true, ProjectRoot: root, Workspace: root}
	envelope := filepath.Join(td.Path(), "envelope.json")
	if err := dispatch.WriteJSON(envelope, &env); err != nil {
		b.Fatal(err)
	}
	b.Setenv("HOME", home)
	pol, needed := ChildPolicy(&env, td.Path(), NewPolicyBase(nil))
	entry := policyEntry(td.Path(), pol, needed, true, ReadDeny{Held: true})
	var cpu [2]time.Duration
	for i := 0; b.Loop(); i++ {
		for k, e := range []string{entry, ""} {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), restrictChildEnv+"="+envelope)
			if e != "" {
				cmd.Env = append(cmd.Env, e)
			}
			if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"mechanism":"landlock"`) {
				b.Fatalf("child: %v: %s", err, out)
			}
			cpu[k] += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
	}
	b.ReportMetric(float64(cpu[0].Microseconds())/float64(b.N)/1000, "passed-child-ms/op")
	b.ReportMetric(float64(cpu[1].Microseconds())/float64(b.N)/1000, "built-child-ms/op")
}

// BenchmarkChildPolicy: a read-only child's policy as its parent builds it
// for each child (the base's paths found once, as a dispatcher's): links
// resolved, hidden paths split around what it keeps (go test
// ./internal/isolate -run '^$' -bench ChildPolicy -benchmem).
func BenchmarkChildPolicy(b *testing.B) {
	b.Setenv("HOME", b.TempDir())
	root := Resolved(b.TempDir())
	td := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := td.Create(); err != nil {
		b.Fatal(err)
	}
	env := dispatch.Envelope{TaskID: td.ID(), ReadOnly: true, ProjectRoot: root, Workspace: root}
	base := NewPolicyBase(nil)
	for b.Loop() {
		ChildPolicy(&env, td.Path(), base)
	}
}

// TestPassedPolicyKeepsEveryField: the policy reaches the child as the
// parent built it, every field of sandbox.Policy (one added later and not
// carried would read as its zero value: a path not hidden) and every path
// byte for byte, one that is not UTF-8 too.
func TestPassedPolicyKeepsEveryField(t *testing.T) {
	var p sandbox.Policy
	v := reflect.ValueOf(&p).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if v.Type().Field(i).Name == "Layer" {
			// The known-projects layer travels as an inherited
			// descriptor (sandbox.LayerForChild), never in the entry.
			continue
		}
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"/home/jos\xe9/" + v.Type().Field(i).Name, "/b"}))
		default:
			t.Fatalf("sandbox.Policy.%s is a %s: carry it in wirePolicy", v.Type().Field(i).Name, f.Kind())
		}
	}
	dir := "/p/.brood/dispatch/jos\xe9"
	t.Setenv(EnvChildPolicy, strings.TrimPrefix(policyEntry(dir, p, true, true, ReadDeny{Held: true}), EnvChildPolicy+"="))
	got, _, ok, err := takePolicy(dir)
	if err != nil || !ok {
		t.Fatalf("takePolicy: ok %v, err %v", ok, err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Errorf("the child got\n%#v\nthe parent passed\n%#v", got, p)
	}
}

// TestPassedPolicyHidesANonUTF8Home: a Latin-1 home's credential store is
// hidden from the child under its own name, not a U+FFFD spelling of it
// that names nothing (review20 C1).
func TestPassedPolicyHidesANonUTF8Home(t *testing.T) {
	home := filepath.Join(t.TempDir(), "jos\xe9")
	ssh := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	root := Resolved(t.TempDir())
	td := taskdir.Open(root).MustTask(taskdir.NewID())
	if err := td.Create(); err != nil {
		t.Fatal(err)
	}
	env := &dispatch.Envelope{TaskID: td.ID(), ProjectRoot: root, Workspace: root}
	pol, needed := ChildPolicy(env, td.Path(), NewPolicyBaseEnv(nil, []string{"HOME=" + home, "PATH=/usr/bin"}))
	if !slices.Contains(pol.Hidden, ssh) {
		t.Fatalf("the parent's policy does not hide %q (%d hidden paths)", ssh, len(pol.Hidden))
	}
	t.Setenv(EnvChildPolicy, strings.TrimPrefix(policyEntry(td.Path(), pol, needed, true, ReadDeny{Held: true}), EnvChildPolicy+"="))
	got, _, ok, err := takePolicy(td.Path())
	if err != nil || !ok {
		t.Fatalf("takePolicy: ok %v, err %v", ok, err)
	}
	if !slices.Contains(got.Hidden, ssh) {
		t.Errorf("the child's policy does not hide %q (%d hidden paths)", ssh, len(got.Hidden))
	}
}
