package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// csvReader reads RFC 4180 records: comma-separated fields, optionally
// double-quoted ("" is a quote inside quotes, quoted fields may span lines).
// Lines without quotes take a fast path that splits in place. The fields
// returned alias internal buffers and are valid until the next call.
type csvReader struct {
	r      *bufio.Reader
	comma  byte
	line   int // line number of the last line read
	long   []byte
	rec    []byte
	ends   []int
	fields [][]byte
}

func newCSVReader(r io.Reader, comma byte) *csvReader {
	return &csvReader{r: bufio.NewReaderSize(r, 1<<20), comma: comma}
}

// readLine returns the next line without its line ending; io.EOF at the end.
func (c *csvReader) readLine() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		c.long = append(c.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = c.r.ReadSlice('\n')
			c.long = append(c.long, line...)
		}
		line = c.long
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(line) == 0 && err != nil {
		return nil, io.EOF
	}
	c.line++
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// read returns the next non-blank record, or io.EOF.
func (c *csvReader) read() ([][]byte, error) {
	var line []byte
	for {
		var err error
		if line, err = c.readLine(); err != nil {
			return nil, err
		}
		if len(line) > 0 {
			break
		}
	}
	c.fields = c.fields[:0]
	if bytes.IndexByte(line, '"') < 0 {
		for {
			i := bytes.IndexByte(line, c.comma)
			if i < 0 {
				c.fields = append(c.fields, line)
				return c.fields, nil
			}
			c.fields = append(c.fields, line[:i])
			line = line[i+1:]
		}
	}
	return c.readQuoted(line)
}

func (c *csvReader) readQuoted(line []byte) ([][]byte, error) {
	start := c.line
	c.rec, c.ends = c.rec[:0], c.ends[:0]
	i := 0
	for {
		if i < len(line) && line[i] == '"' {
			i++
			for {
				j := bytes.IndexByte(line[i:], '"')
				if j < 0 {
					c.rec = append(c.rec, line[i:]...)
					c.rec = append(c.rec, '\n')
					var err error
					if line, err = c.readLine(); err != nil {
						if errors.Is(err, io.EOF) {
							return nil, fmt.Errorf("line %d: unterminated quoted field", start)
						}
						return nil, err
					}
					i = 0
					continue
				}
				c.rec = append(c.rec, line[i:i+j]...)
				i += j + 1
				if i < len(line) && line[i] == '"' {
					c.rec = append(c.rec, '"')
					i++
					continue
				}
				break
			}
			c.ends = append(c.ends, len(c.rec))
			if i == len(line) {
				break
			}
			if line[i] != c.comma {
				return nil, fmt.Errorf("line %d: unexpected character after quoted field", c.line)
			}
			i++
			if i == len(line) {
				c.ends = append(c.ends, len(c.rec)) // trailing empty field
				break
			}
			continue
		}
		j := bytes.IndexByte(line[i:], c.comma)
		if j < 0 {
			c.rec = append(c.rec, line[i:]...)
			c.ends = append(c.ends, len(c.rec))
			break
		}
		c.rec = append(c.rec, line[i:i+j]...)
		c.ends = append(c.ends, len(c.rec))
		i += j + 1
		if i == len(line) {
			c.ends = append(c.ends, len(c.rec))
			break
		}
	}
	prev := 0
	for _, e := range c.ends {
		c.fields = append(c.fields, c.rec[prev:e])
		prev = e
	}
	return c.fields, nil
}
