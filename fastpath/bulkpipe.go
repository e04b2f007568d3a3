package fastpath

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
)

// Parsing ahead of the bulk writer (issue 13).
//
// The two bulk sources, LOAD DATA LOCAL's file (fastLoadData) and the
// literal tuples of a large INSERT (insertValuesTF), turn text into rows:
// reading the socket, splitting fields, parsing numbers — a third to a
// half of a bulk statement's CPU. A rowPipe runs that in a producer
// goroutine while the statement's goroutine checks and writes the rows
// before them (bulkIter), so that on two cores the two overlap. The
// producer only turns text into rows and errors, in input order, with the
// source's synchronous code; everything with an effect (conversions,
// warnings, IGNORE, the store, the statement mark) stays on the
// statement's goroutine, which takes the rows and errors in the same
// order, so the statement's outcome, OK packet and warnings are the
// synchronous ones. The producer runs ahead by at most pipeAhead chunks;
// Close stops it and waits for it. Only the bulk writer, which always
// closes its source, builds pipelined sources.

// pipeChunk is a run of parsed rows: rows[i], or the error errs[i] of
// input row i; end (io.EOF or a terminal error) follows the last one.
type pipeChunk struct {
	rows []sql.Row
	errs []error
	end  error
}

// pipeAhead is the chunks the producer may run ahead.
const pipeAhead = 8

// pipesRunning counts live producers (tests check that none outlives its
// statement).
var pipesRunning atomic.Int64

// rowPipe runs next in a producer goroutine. next returns a row, or an
// error for one input row after which it can go on, or (with end) io.EOF
// or an error that ends the input.
type rowPipe struct {
	next  func() (row sql.Row, err error, end bool)
	chunk int // rows per chunk
	what  string

	ch         chan *pipeChunk
	stop, done chan struct{}
	stopped    bool
	cur        *pipeChunk
	pos        int
}

func newRowPipe(what string, chunk int, next func() (sql.Row, error, bool)) *rowPipe {
	return &rowPipe{next: next, chunk: chunk, what: what}
}

// started: the producer runs (or ran).
func (p *rowPipe) started() bool { return p.ch != nil }

// Next returns the producer's rows and errors in input order.
func (p *rowPipe) Next(ctx *sql.Context) (sql.Row, error) {
	if p.ch == nil {
		p.ch = make(chan *pipeChunk, pipeAhead)
		p.stop = make(chan struct{})
		p.done = make(chan struct{})
		pipesRunning.Add(1)
		go p.produce()
	}
	for {
		if c := p.cur; c != nil {
			if p.pos < len(c.rows) {
				i := p.pos
				p.pos++
				if c.errs != nil && c.errs[i] != nil {
					return nil, c.errs[i]
				}
				return c.rows[i], nil
			}
			if c.end != nil {
				return nil, c.end
			}
		}
		select {
		case c := <-p.ch:
			p.cur, p.pos = c, 0
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (p *rowPipe) produce() {
	defer func() {
		pipesRunning.Add(-1)
		close(p.done)
	}()
	c := &pipeChunk{rows: make([]sql.Row, 0, p.chunk)}
	send := func() bool {
		select {
		case p.ch <- c:
			c = &pipeChunk{rows: make([]sql.Row, 0, p.chunk)}
			return true
		case <-p.stop:
			return false
		}
	}
	defer func() {
		// A panic in the parser fails the statement, not the server.
		if r := recover(); r != nil {
			c.end = fmt.Errorf("%s: %v", p.what, r)
			send()
		}
	}()
	for {
		row, err, end := p.next()
		if end {
			if err == nil {
				err = io.EOF
			}
			c.end = err
			send()
			return
		}
		if err != nil && c.errs == nil {
			c.errs = make([]error, len(c.rows), p.chunk)
		}
		c.rows = append(c.rows, row)
		if c.errs != nil {
			c.errs = append(c.errs, err)
		}
		if len(c.rows) == p.chunk && !send() {
			return
		}
	}
}

// Stop tells the producer to stop (it may be in next until that returns).
func (p *rowPipe) Stop() {
	if p.ch != nil && !p.stopped {
		p.stopped = true
		close(p.stop)
	}
}

// Wait waits for the producer to end after Stop.
func (p *rowPipe) Wait() {
	if p.ch != nil {
		<-p.done
	}
}
