package tool

import (
	"encoding/json"
	"fmt"
	"golang.org/x/sys/unix"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "OPENAI_API_KEY": true, "GITHUB_TOKEN": true, "aws_secret": true,
		"DB_PASSWORD": true, "STRIPE_KEY": true, "PATH": false, "HOME": false, "KEYBOARD": false, "TOKENS_USED": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedactor(t *testing.T) {
	r := NewRedactor([]string{"GH_TOKEN=ghp_abcdefgh", "LONG_SECRET=ghp_abcdefgh_more", "SHORT_KEY=abc", "PATH=/usr/bin", "BROKEN"})
	tests := []struct{ in, want string }{
		{"token ghp_abcdefgh here", "token [REDACTED:GH_TOKEN] here"},
		{"ghp_abcdefgh_more", "[REDACTED:LONG_SECRET]"}, // the longer value wins
		{"abc and /usr/bin stay", "abc and /usr/bin stay"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := r.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var nilR *Redactor
	if nilR.Redact("x") != "x" {
		t.Error("nil Redactor changed text")
	}
}

func TestRedactWriterAcrossWrites(t *testing.T) {
	r := NewRedactor([]string{"API_TOKEN=supersecretvalue"})
	text := "a supersecretvalue b supersecretvalue"
	for split := 0; split <= len(text); split++ {
		var b strings.Builder
		w := r.Writer(&b)
		w.Write([]byte(text[:split]))
		w.Write([]byte(text[split:]))
		w.Close()
		if got, want := b.String(), "a [REDACTED:API_TOKEN] b [REDACTED:API_TOKEN]"; got != want {
			t.Fatalf("split at %d: %q, want %q", split, got, want)
		}
	}
}

func TestIsSecretNameSegments(t *testing.T) {
	for name, want := range map[string]bool{
		"GH_PAT": true, "MY_DB_PASSWD_X": true, "DB_PASS": true, "PGPASSWORD": true, "MYSQL_PWD": true, "MYSQL_ROOT_PASSWORD": true,
		"ADMIN_PW": true, "GPG_PASSPHRASE": true, "SSHPASSPHRASE": true, "SSH_AUTH_SOCK": true, "AWS_SECRET_ACCESS_KEY": true,
		"githubToken": true, "apiKey": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "SENTRY_DSN": true,
		"PWD": false, "OLDPWD": false, "PATH": false, "PATCH_LEVEL": false, "KEYBOARD": false, "MONKEY": false,
		"GIT_ASKPASS": false, "XAUTHORITY": false, "TERM": false, "PASSENGER": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedactVariants(t *testing.T) {
	r := NewRedactor([]string{"GITHUB_TOKEN=tok_1234567890abcdef"})
	for _, in := range []string{"tok_1234567890abcdef", "fedcba0987654321_kot", "dG9rXzEyMzQ1Njc4OTBhYmNkZWY", "dG9rXzEyMzQ1Njc4OTBhYmNkZWYK"} {
		if got := r.Redact("x " + in + " y"); got != "x [REDACTED:GITHUB_TOKEN] y" {
			t.Errorf("Redact(%q) = %q", in, got)
		}
	}
}

func TestRedactKeyFormats(t *testing.T) {
	r := NewRedactor(nil)
	for in, kind := range map[string]string{
		"sk-ant-api03-" + strings.Repeat("a1B2", 10):                                         "anthropic",
		"sk-proj-" + strings.Repeat("Zz09", 8):                                               "openai",
		"sk_live_" + strings.Repeat("4eC39HqLyjWDarjtT1zdp7dc", 1):                           "stripe",
		"ghp_" + strings.Repeat("A1b2C3", 6):                                                 "github",
		"github_pat_11ABCDEFG0" + strings.Repeat("x", 40):                                    "github",
		"AKIAIOSFODNN7EXAMPLE":                                                               "aws",
		"xoxb-1234567890-abcdefghij":                                                         "slack",
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA\n-----END OPENSSH PRIVATE KEY-----": "privatekey",
	} {
		if got, want := r.Redact("before "+in+" after"), "before [REDACTED:"+kind+"] after"; got != want {
			t.Errorf("Redact(%.30q…) = %q, want %q", in, got, want)
		}
	}
	for _, keep := range []string{"a sk- prefix alone", "ghost of github", "AKIA is short", "task-ant-hill"} {
		if got := r.Redact(keep); got != keep {
			t.Errorf("Redact(%q) = %q: ordinary text changed", keep, got)
		}
	}
}

func TestProjectRedactorDotenv(t *testing.T) {
	root := t.TempDir()
	writeTestFile(t, root+"/.env", "# comment\nDB_PASSWORD=\"hunter2hunter2\"\nexport AWS_KEY=abcdefgh123 # trailing\nNODE_ENV=development\nPORT=8080\nDATABASE_URL=postgres://u:pw12345678@db/x\nSHORT=abc\n")
	writeTestFile(t, root+"/.env.example", "DB_PASSWORD=changeme-placeholder\n")
	writeTestFile(t, root+"/svc/.env.local", "STRIPE=whsec_0123456789\n")
	r := NewProjectRedactor(nil, root)
	in := "hunter2hunter2 abcdefgh123 development 8080 postgres://u:pw12345678@db/x abc whsec_0123456789 changeme-placeholder"
	want := "[REDACTED:.env:DB_PASSWORD] [REDACTED:.env:AWS_KEY] development 8080 [REDACTED:.env:DATABASE_URL] abc [REDACTED:.env:STRIPE] changeme-placeholder"
	if got := r.Redact(in); got != want {
		t.Errorf("Redact:\n got %q\nwant %q", got, want)
	}
}

// TestProjectRedactorDotenvLink: a .env that is a link to the real file
// (the red team's `.env -> secrets/prod.env`) is redacted as the file is;
// one that names a FIFO or a device yields nothing and holds nothing up.
func TestProjectRedactorDotenvLink(t *testing.T) {
	root := t.TempDir()
	writeTestFile(t, root+"/secrets/prod.env", "DB_PASSWORD=hunter2hunter2\n")
	if err := os.Symlink("secrets/prod.env", root+"/.env"); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(root+"/fifo", 0o600); err != nil {
		t.Fatal(err)
	}
	for _, link := range []struct{ name, to string }{{".env.fifo", "fifo"}, {".env.zero", "/dev/zero"}} {
		if err := os.Symlink(link.to, filepath.Join(root, link.name)); err != nil {
			t.Fatal(err)
		}
	}
	r := NewProjectRedactor(nil, root)
	if got, want := r.Redact("pw hunter2hunter2"), "pw [REDACTED:.env:DB_PASSWORD]"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

func TestChildEnviron(t *testing.T) {
	got := ChildEnviron([]string{"PATH=/bin", "GITHUB_TOKEN=x", "GH_TOKEN=y", "ANTHROPIC_API_KEY=k", "MY_DB_PASSWD_X=p", "HOME=/h"}, []string{"GH_TOKEN"})
	want := []string{"PATH=/bin", "GH_TOKEN=y", "ANTHROPIC_API_KEY=k", "HOME=/h"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ChildEnviron = %q, want %q", got, want)
	}
}

func TestRedactWriterKeyAcrossWrites(t *testing.T) {
	r := NewRedactor(nil)
	text := "key: ghp_" + strings.Repeat("A1b2C3", 6) + " done\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabcd\n-----END RSA PRIVATE KEY-----\ntail"
	for split := 0; split <= len(text); split++ {
		var b strings.Builder
		w := r.Writer(&b)
		w.Write([]byte(text[:split]))
		w.Write([]byte(text[split:]))
		w.Close()
		if got, want := b.String(), "key: [REDACTED:github] done\n[REDACTED:privatekey]\ntail"; got != want {
			t.Fatalf("split at %d: %q, want %q", split, got, want)
		}
	}
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkRedact(b *testing.B) {
	var env []string
	for i := range 50 {
		env = append(env, fmt.Sprintf("SVC%d_TOKEN=value-%d-%s", i, i, strings.Repeat("x", 20)))
	}
	r := NewRedactor(env)
	s := strings.Repeat("an ordinary line of tool output with nothing secret in it at all\n", 500)
	r.Redact(s)
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for b.Loop() {
		r.Redact(s)
	}
}

// TestMayHoldKeyNeverMissesAMatch checks the prefilter against the
// expression itself: every string keyFormat matches must pass it, over
// the shortest keys of every format embedded in ordinary text, and cut
// at every length (a prefix with too short a tail is no key).
func TestMayHoldKeyNeverMissesAMatch(t *testing.T) {
	keys := []string{
		"sk-ant-" + strings.Repeat("a", 16), "sk-" + strings.Repeat("Z", 20), "sk-admin-" + strings.Repeat("0", 20),
		"sk_live_" + strings.Repeat("a", 16), "rk_test_" + strings.Repeat("1", 16), "pk_live_" + strings.Repeat("Q", 16),
		"ghp_" + strings.Repeat("A", 30), "ghr_" + strings.Repeat("b", 30), "github_pat_" + strings.Repeat("_", 22),
		"AKIA" + strings.Repeat("Z", 16), "ASIA" + strings.Repeat("9", 16), "xoxa-" + strings.Repeat("-", 10),
		"xoxr-" + strings.Repeat("k", 10), "AIza" + strings.Repeat("-", 35),
		"-----BEGIN PRIVATE KEY-----x-----END PRIVATE KEY-----",
	}
	for _, k := range keys {
		for n := 1; n <= len(k); n++ {
			for _, s := range []string{k[:n], "task-1 " + k[:n] + " end", "x" + k[:n], "sk-" + k[:n] + "\n"} {
				if keyFormat().MatchString(s) && !mayHoldKey(s) {
					t.Errorf("mayHoldKey(%q) = false, but keyFormat matches it", s)
				}
			}
		}
	}
	for _, s := range []string{"bench-task-12: read README.md", "disk-1 task-ant-hill", "AKIA is short", "xoxb-short", ""} {
		if mayHoldKey(s) {
			t.Errorf("mayHoldKey(%q) = true: ordinary text would run the expression", s)
		}
	}
}

func TestRefuseConfig(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	env := &Env{Dir: root, ConfigRoot: root, ConfigDirs: []string{filepath.Join(home, ".config", "brood")}}
	w := &Write{}
	for path, refused := range map[string]bool{
		".claude/agents/x.md": true, ".brood/settings.toml": true, ".mcp.json": true, "sub/.claude/settings.json": true,
		filepath.Join(home, ".config", "brood", "trust.json"): true,
		".brood/dispatch/01/tmp/x":                            false, "src/main.go": false, filepath.Join(home, "notes.txt"): false,
	} {
		in, _ := json.Marshal(map[string]string{"file_path": path, "content": "x"})
		if _, got := refuseConfig(env, w, in); got != refused {
			t.Errorf("refuseConfig(%s) = %v, want %v", path, got, refused)
		}
	}
}

// TestLazyProjectRedactor: a child's redactor reads the environment's and
// the project's secrets at its first use, not when it is made (a writer's
// first image re-executes before it redacts anything), and then as a
// redactor made at that moment would: what the .env files held at the
// first use is redacted, not what they held before nor after.
func TestLazyProjectRedactor(t *testing.T) {
	for _, c := range []struct {
		name, atMade string // the .env's value when the redactor is made ("": none)
	}{
		{"made before the .env", ""},
		{"the .env changed before the first use", "s3cr3t-at-made"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			write := func(v string) {
				if err := os.WriteFile(filepath.Join(root, ".env"), []byte("API_TOKEN="+v+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if c.atMade != "" {
				write(c.atMade)
			}
			r := NewLazyProjectRedactor([]string{"GH_TOKEN=ghvalue-0123456789"}, root)
			write("s3cr3t-first-use")
			if got := r.Redact("a s3cr3t-first-use b ghvalue-0123456789"); strings.Contains(got, "s3cr3t") || strings.Contains(got, "ghvalue") {
				t.Errorf("first use: %q, want the .env's and the environment's secrets redacted", got)
			}
			write("s3cr3t-later")
			for _, kept := range []string{c.atMade, "s3cr3t-later"} {
				if got := r.Redact("x " + kept); kept != "" && !strings.Contains(got, kept) {
					t.Errorf("%q redacted: the .env was not read once, at the first use", kept)
				}
			}
		})
	}
}

// BenchmarkProjectRedactor is what making a child's project redactor
// costs (its environment's secrets, the .env files at the top of a
// project of 30 directories of 20 entries and one below): what a writer's
// first image no longer pays before its re-exec (NewLazyProjectRedactor).
//
//	go test ./internal/tool -run '^$' -bench ProjectRedactor -benchtime 200x
func BenchmarkProjectRedactor(b *testing.B) {
	root := b.TempDir()
	for i := range 30 {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := range 20 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", j)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte("API_TOKEN=s3cr3t-value-0123\nPORT=8080\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	environ := os.Environ()
	for b.Loop() {
		NewProjectRedactor(environ, root)
	}
}

// TestBroodsWordsAreNotSecrets: a repository's committed .env whose values
// are brood's own status words (AUTH_TOKEN=rejected) does not blank them
// from what brood prints, and a value holding one is still redacted whole.
func TestBroodsWordsAreNotSecrets(t *testing.T) {
	root := t.TempDir()
	writeTestFile(t, root+"/.env", "AUTH_TOKEN=rejected\nFOO_SECRET=error_max_turns\nBAR_TOKEN=untrusted\nREAL_TOKEN=rejected-9f8e7d6c\nA_TOKEN=is_error\nB_TOKEN=session_id\nC_TOKEN=num_turns\nD_TOKEN=end_turn\n")
	r := NewProjectRedactor(nil, root)
	in := `{"subtype":"error_max_turns","is_error":false,"session_id":"x","num_turns":1,"stop_reason":"end_turn"} <subagent-result status="rejected" trust="untrusted"> rejected-9f8e7d6c`
	want := `{"subtype":"error_max_turns","is_error":false,"session_id":"x","num_turns":1,"stop_reason":"end_turn"} <subagent-result status="rejected" trust="untrusted"> [REDACTED:.env:REAL_TOKEN]`
	if got := r.Redact(in); got != want {
		t.Errorf("Redact:\n got %q\nwant %q", got, want)
	}
}
