package spawn

import "github.com/broodhq/brood/internal/dispatch"

// Settle is settle of a task of the project at root, for the race test in
// inbox_test.go.
func Settle(root, id, name string) error { return settle(dispatch.Finder{ProjectRoot: root}, id, name) }

// RecordSent is recordSent, for the tests that play Send's part.
var RecordSent = recordSent
