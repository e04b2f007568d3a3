package svm

import (
	"errors"
	"testing"

	"github.com/dpsql/dpsql/mechanism"
)

// A killed query stops the solver between iterations and releases nothing.
func TestStopEndsTraining(t *testing.T) {
	done := make(chan struct{})
	close(done)
	cfg := Config{Epsilon: 1, N: 4, Features: []string{"a"}, Lo: []float64{0}, Hi: []float64{1}, Classes: []string{"n", "y"},
		Stop: mechanism.NewStop(done)}
	tr, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.Train([][]float64{{0}, {1}, {0.2}, {0.9}}, []int{0, 1, 0, 1})
	if !errors.Is(err, mechanism.ErrStopped) {
		t.Fatalf("killed training returned %v, want ErrStopped", err)
	}
	cfg.Stop = mechanism.Stop{}
	if tr, err = Plan(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Train([][]float64{{0}, {1}, {0.2}, {0.9}}, []int{0, 1, 0, 1}); err != nil {
		t.Fatalf("training without a kill: %v", err)
	}
}
