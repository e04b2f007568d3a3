package engine_test

import (
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/dpsql/dpsql/engine"
)

// plannerInt is the planner's convertInt: the first of int8, uint8, …,
// uint64 that parses, else a decimal.
func plannerInt(ctx *sql.Context, value string) (any, error) {
	for _, try := range []func() (any, error){
		func() (any, error) { v, err := strconv.ParseInt(value, 10, 8); return int8(v), err },
		func() (any, error) { v, err := strconv.ParseUint(value, 10, 8); return uint8(v), err },
		func() (any, error) { v, err := strconv.ParseInt(value, 10, 16); return int16(v), err },
		func() (any, error) { v, err := strconv.ParseUint(value, 10, 16); return uint16(v), err },
		func() (any, error) { v, err := strconv.ParseInt(value, 10, 32); return int32(v), err },
		func() (any, error) { v, err := strconv.ParseUint(value, 10, 32); return uint32(v), err },
		func() (any, error) { return strconv.ParseInt(value, 10, 64) },
		func() (any, error) { return strconv.ParseUint(value, 10, 64) },
	} {
		if v, err := try(); err == nil {
			return v, nil
		}
	}
	if d, _, err := types.InternalDecimalType.Convert(ctx, value); err == nil {
		return d, nil
	}
	return nil, fmt.Errorf("could not convert %s to any numerical type", value)
}

// TestIntLiteralMatchesPlanner: the one-parse intLiteral gives the type and
// value of the planner's sequence of tries at every boundary.
func TestIntLiteralMatchesPlanner(t *testing.T) {
	ctx := sql.NewEmptyContext()
	var cases []string
	for _, b := range []int64{0, 127, 128, 255, 256, 32767, 32768, 65535, 65536, 1<<31 - 1, 1 << 31, 1<<32 - 1, 1 << 32, 1<<63 - 1} {
		for _, d := range []int64{-1, 0, 1} {
			if v := b + d; v >= 0 { // (b+d overflows only past MaxInt64)
				cases = append(cases, strconv.FormatInt(v, 10), strconv.FormatInt(-v, 10))
			}
		}
	}
	cases = append(cases, "-9223372036854775808", "-9223372036854775809", "9223372036854775808",
		"18446744073709551615", "18446744073709551616", "+5", "+300", "-0", "007", "-00129", "1e3", "")
	for _, c := range cases {
		got, gerr := engine.IntLiteral(ctx, c)
		want, werr := plannerInt(ctx, c)
		if (gerr == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %T(%v), %v; planner %T(%v), %v", c, got, got, gerr, want, want, werr)
		}
	}
}
