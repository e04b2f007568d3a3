package mechanism

import (
	"errors"
	"testing"
)

func TestStop(t *testing.T) {
	var zero Stop
	if zero.Stopped() || zero.Err() != nil {
		t.Fatal("the zero Stop stopped")
	}
	ch := make(chan struct{})
	s := NewStop(ch)
	if s.Stopped() {
		t.Fatal("stopped before done was closed")
	}
	close(ch)
	if !s.Stopped() || !errors.Is(s.Err(), ErrStopped) {
		t.Fatal("not stopped after done was closed")
	}
}
