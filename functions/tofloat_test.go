package functions

import (
	"testing"

	"github.com/shopspring/decimal"
)

// TestToFloatDecimal: a DECIMAL that float64 cannot hold exactly (19.99) is
// still a number (it used to read as NULL: the midpoint in DP sums, and a
// bounds violation on writes).
func TestToFloatDecimal(t *testing.T) {
	f, ok := ToFloat(decimal.RequireFromString("19.99"))
	if !ok || f != 19.99 {
		t.Fatalf("ToFloat(19.99) = %v, %v", f, ok)
	}
	if _, ok := ToFloat("19.99"); ok {
		t.Fatal("a string is not numeric")
	}
}
