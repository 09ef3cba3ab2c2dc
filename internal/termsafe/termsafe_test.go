package termsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "hello, world\n\tindented", "hello, world\n\tindented"},
		{"unicode", "naïve — ✓ 日本", "naïve — ✓ 日本"},
		{"window title BEL", "a\x1b]0;pwned\x07b", "ab"},
		{"window title ST", "a\x1b]2;pwned\x1b\\b", "ab"},
		{"clipboard OSC 52", "x\x1b]52;c;cm0gLXJmIH4=\x07y", "xy"},
		{"clear screen", "\x1b[2J\x1b[Hnew", "new"},
		{"colour", "\x1b[1;31mred\x1b[0m", "red"},
		{"private mode", "\x1b[?1049hz", "z"},
		{"reset", "\x1bcafter", "after"},
		{"charset nF", "\x1b(Bok", "ok"},
		{"8-bit CSI", "a\u009b2Jb", "ab"},
		{"8-bit OSC", "a\u009d0;t\u009cb", "ab"},
		{"8-bit other", "a\u0085b", "ab"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"unterminated OSC stops at newline", "a\x1b]0;title\nrest", "a\nrest"},
		{"unterminated CSI", "a\x1b[12", "a"},
		{"lone ESC at end", "a\x1b", "a"},
		{"NUL", "a\x00b", `a\x00b`},
		{"BEL BS", "a\x07\x08b", `a\x07\x08b`},
		{"CRLF", "a\r\nb", "a\nb"},
		{"lone CR", "secret\rfake", `secret\x0dfake`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"bidi override", "a\u202eb", `a\u202eb`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Text(tc.in); got != tc.want {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestLine(t *testing.T) {
	if got, want := Line("a\nb\tc\r\nd\x1b[2J"), "a b c d"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
	if s := "plain line"; Line(s) != s {
		t.Errorf("Line changed a plain line")
	}
}

func TestModel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain\n\ttext\r\n", "plain\n\ttext\r\n"},
		{"a\x00b", `a\x00b`},
		{"\x1b[2J", `\x1b[2J`},
		{"bad \xff\xfe", `bad \xff\xfe`},
		{"ünïcode ✓", "ünïcode ✓"},
	} {
		if got := Model(tc.in); got != tc.want {
			t.Errorf("Model(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	n, err := w.Write([]byte("x\x1b]0;t\x07y\n"))
	if err != nil || n != 9 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if b.String() != "xy\n" {
		t.Errorf("wrote %q", b.String())
	}
}

// checkTerminalSafe fails when out holds anything a terminal interprets.
func checkTerminalSafe(t *testing.T, in, out string, keepLayout bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%q -> %q: invalid UTF-8", in, out)
	}
	for i, r := range out {
		switch {
		case hiddenAt(out, i, r, utf8.RuneLen(r)):
			t.Fatalf("%q -> %q: invisible %U left", in, out, r)
		case r == '\n' || r == '\t':
			if !keepLayout {
				t.Fatalf("%q -> %q: layout character %q in a line", in, out, r)
			}
		case r < 0x20 || r == 0x7f || isC1(r) || isBidi(r):
			t.Fatalf("%q -> %q: control %U left", in, out, r)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]52;c;AAAA\x07", "\x1b[2J", "\u009b31m", "a\x00\xff", "\x1bP\x1b\\", "\r\n\t", "\u202e", "\U000e0041\u200b", "😀\ufe0f\ufe0f\u200d😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Text(in)
		checkTerminalSafe(t, in, out, true)
		if Text(out) != out {
			t.Fatalf("Text not idempotent: %q -> %q -> %q", in, out, Text(out))
		}
		line := Line(in)
		checkTerminalSafe(t, in, line, false)
		if clean(in, true) && out != in {
			t.Fatalf("clean input changed: %q -> %q", in, out)
		}
		if strings.Count(out, "\n") != strings.Count(in, "\n") {
			t.Fatalf("newlines lost: %q -> %q", in, out)
		}
	})
}

func FuzzModel(f *testing.F) {
	for _, s := range []string{"", "a\x00b", "\xff", "\x1b[0m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Model(in)
		if !utf8.ValidString(out) {
			t.Fatalf("%q -> %q: invalid UTF-8", in, out)
		}
		for _, r := range out {
			if r < 0x20 && r != '\t' && r != '\n' && r != '\r' {
				t.Fatalf("%q -> %q: control %U left", in, out, r)
			}
		}
		for i, r := range out {
			if isC1(r) || hiddenAt(out, i, r, utf8.RuneLen(r)) {
				t.Fatalf("%q -> %q: invisible %U left", in, out, r)
			}
		}
		if utf8.ValidString(in) && !strings.ContainsFunc(in, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || isC1(r) || Hidden(r) }) && out != in {
			t.Fatalf("clean input changed: %q -> %q", in, out)
		}
	})
}

func BenchmarkTextClean(b *testing.B) {
	s := strings.Repeat("an ordinary line of tool output, nothing odd in it\n", 200)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Text(s)
	}
}

func BenchmarkTextHostile(b *testing.B) {
	s := strings.Repeat("\x1b[31mred\x1b[0m \x1b]0;t\x07 \x00\xff\n", 200)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Text(s)
	}
}

func TestJSON(t *testing.T) {
	in := []byte("{\"a\": \"x\u009b2J\u202ey\"}\n")
	got := JSON(in)
	if string(got) != "{\"a\": \"x\\u009b2J\\u202ey\"}\n" {
		t.Fatalf("JSON = %q", got)
	}
	var v, w map[string]string
	if json.Unmarshal(in, &v) != nil || json.Unmarshal(got, &w) != nil || v["a"] != w["a"] {
		t.Fatalf("value changed: %q vs %q", v, w)
	}
	plain := []byte("{\n\t\"a\": 1\n}")
	if string(JSON(plain)) != string(plain) {
		t.Fatal("plain JSON changed")
	}
}
