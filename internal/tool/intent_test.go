package tool

import "testing"

func TestIntent(t *testing.T) {
	same := [][]string{
		{`{"command":"go test ./..."}`, `{"command":"go test -v ./..."}`, `{"command":"go test -count=1 ./..."}`, `{"command":"go test -run TestX ./pkg"}`, `{"command":"cd sub && go test ./..."}`, `{"command":"GOFLAGS=-v go test"}`},
		{`{"command":"pytest -x"}`, `{"command":"pytest tests/test_a.py"}`, `{"command":"pytest -k foo -vv"}`},
		{`{"command":"npm test"}`, `{"command":"npm test -- --watch=false"}`},
	}
	for _, group := range same {
		want := Intent("Bash", []byte(group[0]))
		for _, in := range group[1:] {
			if got := Intent("Bash", []byte(in)); got != want {
				t.Errorf("Intent(%s) = %q, want %q (same as %s)", in, got, want, group[0])
			}
		}
	}
	differ := [][2]string{
		{`{"command":"go test ./..."}`, `{"command":"go vet ./..."}`},
		{`{"command":"npm test"}`, `{"command":"npm run build"}`},
		{`{"command":"make test"}`, `{"command":"make lint"}`},
	}
	for _, d := range differ {
		if Intent("Bash", []byte(d[0])) == Intent("Bash", []byte(d[1])) {
			t.Errorf("%s and %s have one intent", d[0], d[1])
		}
	}
	if Intent("Edit", []byte(`{"file_path":"a.go","old_string":"x"}`)) != Intent("edit", []byte(`{"file_path":"./a.go","old_string":"y"}`)) {
		t.Error("two edits of one file are not one intent")
	}
}
