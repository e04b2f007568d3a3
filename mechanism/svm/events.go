package svm

import "github.com/dpsql/dpsql/budget"

// Events returns the privacy cost to reserve before Train: one pure-ε
// Laplace release per binary model. Under sequential composition they sum
// to cfg.Epsilon.
func (t *Trainer) Events() []budget.Event {
	ev := make([]budget.Event, t.k)
	for i := range ev {
		ev[i] = budget.Event{Kind: budget.Laplace, Epsilon: t.epsK}
	}
	return ev
}
