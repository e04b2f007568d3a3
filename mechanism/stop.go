package mechanism

import "errors"

// ErrStopped is returned by a computation that ended early because its query
// was killed. The release's charge stays; the caller discards any result.
var ErrStopped = errors.New("mechanism: stopped because the query was killed")

// Stop lets a long computation (a solver's epochs, a pass over the rows) end
// early when its query is killed (KILL QUERY / KILL). It must be checked only
// at points whose number is fixed by public values (between epochs, every
// so many rows), never in a way that makes the work done depend on the data.
// The zero Stop never stops.
type Stop struct{ done <-chan struct{} }

// NewStop returns a Stop that fires when done is closed (a context's Done).
func NewStop(done <-chan struct{}) Stop { return Stop{done: done} }

// Stopped reports, without blocking, whether the computation should end.
func (s Stop) Stopped() bool {
	if s.done == nil {
		return false
	}
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Err is ErrStopped once stopped, else nil.
func (s Stop) Err() error {
	if s.Stopped() {
		return ErrStopped
	}
	return nil
}
