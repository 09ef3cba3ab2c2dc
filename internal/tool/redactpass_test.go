package tool

import (
	"slices"
	"testing"
)

// TestPassedSecretsAreTheEnvironmentsToo: what a parent hands its child
// (PassSecrets) is every value its redactor knows, its environment's
// secret-looking variables' as well as the .env values (a child's
// environment holds none of the former); and the child keeps only labels
// a parent's redactor makes.
func TestPassedSecretsAreTheEnvironmentsToo(t *testing.T) {
	root := t.TempDir()
	writeTestFile(t, root+"/.env", "DB_PASSWORD=orchard-plum-7781\n")
	r := NewProjectRedactor([]string{"GITHUB_TOKEN=9c1e7a4b2f8d3065e1a7", "PATH=/usr/bin:/bin"}, root)
	var labels []string
	for _, p := range r.passedSecrets() {
		if !slices.Contains(labels, p.Label) {
			labels = append(labels, p.Label)
		}
		if !passableLabel(p.Label) {
			t.Errorf("the child would drop %q", p.Label)
		}
	}
	slices.Sort(labels)
	if want := []string{".env:DB_PASSWORD", "GITHUB_TOKEN"}; !slices.Equal(labels, want) {
		t.Errorf("passed %v, want %v", labels, want)
	}
	for _, tc := range []struct {
		label string
		want  bool
	}{
		{".env:DB_PASSWORD", true},
		{".env:weird name[0]", true},
		{"GITHUB_TOKEN", true},
		{"ANTHROPIC_API_KEY", true},
		{"DATABASE_URL", true},
		{"A B", false},
		{"A=B", false},
		{"X_TOKEN]\nforged", false},
		{"", false},
	} {
		if got := passableLabel(tc.label); got != tc.want {
			t.Errorf("passableLabel(%q) = %v, want %v", tc.label, got, tc.want)
		}
	}
}
