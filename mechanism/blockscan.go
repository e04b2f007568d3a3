package mechanism

import (
	"fmt"
	"sync"
)

// StreamBlocks is the parallel block scan shared by the sufficient-statistics
// passes (linreg, lsq) over rows that arrive one at a time from a storage
// scan: each row is d feature values followed by the raw label. The scan
// fills flat chunks of batch rows while workers goroutines fold finished
// chunks, so reading and arithmetic overlap and no n × d copy of the table is
// held. fold(k, rows, get) runs on worker k only (k < workers), so each
// worker can own its own accumulator; get(r) returns row r's features and
// label, valid only during the call. Chunks reach the workers in scan order;
// which worker takes which chunk is up to the scheduler, so callers merge the
// per-worker results themselves in worker order.
//
// A row of the wrong width ends the scan with an error; scan's own error is
// returned as is. Either way every chunk already handed out is folded before
// StreamBlocks returns.
func StreamBlocks(d, batch, workers int, scan func(emit func(row []float64) error) error, fold func(k, rows int, get func(r int) ([]float64, float64))) error {
	width := d + 1
	type chunk struct {
		data []float64
		rows int
	}
	free := make(chan []float64, 2*workers+2)
	for i := 0; i < cap(free); i++ {
		free <- make([]float64, batch*width)
	}
	work := make(chan chunk, 2*workers)
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range work {
				data := ch.data
				fold(k, ch.rows, func(r int) ([]float64, float64) {
					row := data[r*width : (r+1)*width]
					return row[:d], row[d]
				})
				free <- data
			}
		}()
	}
	cur, rows := <-free, 0
	err := scan(func(row []float64) error {
		if len(row) != width {
			return fmt.Errorf("row has %d values, want %d features and a label", len(row), width)
		}
		copy(cur[rows*width:], row)
		if rows++; rows == batch {
			work <- chunk{cur, rows}
			cur, rows = <-free, 0
		}
		return nil
	})
	if err == nil && rows > 0 {
		work <- chunk{cur, rows}
	}
	close(work)
	wg.Wait()
	return err
}
