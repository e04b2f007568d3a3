package lmgc

import (
	"errors"
	"testing"

	"github.com/dpsql/dpsql/mechanism"
)

// A killed query stops the solve between iterations and releases nothing.
func TestStopEndsTraining(t *testing.T) {
	done := make(chan struct{})
	close(done)
	cfg := Config{Epsilon: 1, N: 4, Features: []string{"a"}, Lo: []float64{0}, Hi: []float64{1}, Classes: []string{"n", "y"},
		Stop: mechanism.NewStop(done)}
	tr, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = tr.Train([][]float64{{0}, {1}, {0.2}, {0.9}}, []int{0, 1, 0, 1}); !errors.Is(err, mechanism.ErrStopped) {
		t.Fatalf("killed training returned %v, want ErrStopped", err)
	}
}
