package cmdutil

import (
	"github.com/broodhq/brood/internal/price"
	"github.com/broodhq/brood/internal/settings"
)

// Prices is the price table: brood's list prices with the [prices] of the
// user's and the project's settings files applied.
func (f *Factory) Prices() (price.Table, error) {
	user, project := settings.Sources{ProjectRoot: f.ProjectRoot, Home: f.Home, UserFile: f.Getenv(settings.EnvUserSettings)}.Paths()
	return price.Load(user, project)
}
