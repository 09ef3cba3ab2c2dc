package trust

import "testing"

// TestKnownPrograms (evfix): a program word that is only a variable the
// line itself set for certain before it is written out as its value;
// one the environment, a subshell, a condition, a second assignment or
// a read could set stays as it is.
func TestKnownPrograms(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`PYTHON=python3; "$PYTHON" -m pytest`, `PYTHON=python3; python3 -m pytest`},
		{`export PY=.venv/bin/python && $PY -m pytest`, `export PY=.venv/bin/python && .venv/bin/python -m pytest`},
		{`GO=go && ${GO} test ./... && ${GO} vet ./...`, `GO=go && go test ./... && go vet ./...`},
		{`"$PYTHON" -m pytest`, `"$PYTHON" -m pytest`},
		{`"$P" -m pytest; P=python3`, `"$P" -m pytest; P=python3`},
		{`(P=python3); "$P" -m pytest`, `(P=python3); "$P" -m pytest`},
		{`true && P=python3; "$P" -m pytest`, `true && P=python3; "$P" -m pytest`},
		{`P=python3 || true; "$P" -m pytest`, `P=python3 || true; "$P" -m pytest`},
		{`P=python3 & "$P" -m pytest`, `P=python3 & "$P" -m pytest`},
		{`P=python3; read P; "$P" -m pytest`, `P=python3; read P; "$P" -m pytest`},
		{`P=python3; P=trap; "$P" -m pytest`, `P=python3; P=trap; "$P" -m pytest`},
		{`P=python3; : ${P:=trap}; "$P" -m pytest`, `P=python3; : ${P:=trap}; "$P" -m pytest`},
		{`P="$(echo trap)"; "$P" -m pytest`, `P="$(echo trap)"; "$P" -m pytest`},
		{`P='a b'; $P -m pytest`, `P='a b'; $P -m pytest`},
		{`P=python3; "${P}x" -m pytest`, `P=python3; "${P}x" -m pytest`},
		{`P=python3 "$P" -m pytest`, `P=python3 "$P" -m pytest`},
		{`IFS=h; P=python3; $P -m pytest`, `IFS=h; P=python3; $P -m pytest`},
	} {
		if got := KnownPrograms(tc.line); got != tc.want {
			t.Errorf("KnownPrograms(%q) = %q; want %q", tc.line, got, tc.want)
		}
	}
}
