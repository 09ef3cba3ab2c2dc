package childrun

import "github.com/broodhq/brood/internal/model"

func deref(u *model.Usage) model.Usage {
	if u == nil {
		return model.Usage{}
	}
	return *u
}
