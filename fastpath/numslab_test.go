package fastpath

import (
	"math"
	"runtime"
	"testing"
)

// TestNumSlab: the interfaces a numSlab builds are the compiler's: same
// type, same value, equal to the ordinary boxing, and they stay intact
// after the slab moves on and the GC runs.
func TestNumSlab(t *testing.T) {
	var s numSlab
	fs := []float64{0, -0.0, 1.5, -1e300, math.Inf(1), math.SmallestNonzeroFloat64}
	is := []int64{0, 1, -1, 255, 256, math.MaxInt64, math.MinInt64}
	var boxed []any
	var want []any
	for r := 0; r < 3*numSlabLen/len(fs); r++ {
		for _, f := range fs {
			boxed = append(boxed, s.float(f))
			want = append(want, f)
		}
		for _, n := range is {
			boxed = append(boxed, s.int(n))
			want = append(want, n)
		}
	}
	runtime.GC()
	for i, v := range boxed {
		switch w := want[i].(type) {
		case float64:
			f, ok := v.(float64)
			if !ok || math.Float64bits(f) != math.Float64bits(w) || v != want[i] && !math.IsNaN(w) {
				t.Fatalf("value %d: %#v, want %#v", i, v, w)
			}
		case int64:
			n, ok := v.(int64)
			if !ok || n != w || v != want[i] {
				t.Fatalf("value %d: %#v, want %#v", i, v, w)
			}
		}
	}
	var nilSlab *numSlab
	if v := nilSlab.float(2.5); v != any(2.5) {
		t.Fatalf("nil slab: %#v", v)
	}
	if v := nilSlab.int(7); v != any(int64(7)) {
		t.Fatalf("nil slab: %#v", v)
	}
}

// BenchmarkBoxFloat compares the allocations of the two boxings
// (go test -bench BoxFloat -benchmem ./engine).
func BenchmarkBoxFloat(b *testing.B) {
	sink := make([]any, 1024)
	b.Run("convT64", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			sink[i&1023] = float64(i) + 0.5
		}
	})
	b.Run("numSlab", func(b *testing.B) {
		b.ReportAllocs()
		var s numSlab
		for i := range b.N {
			sink[i&1023] = s.float(float64(i) + 0.5)
		}
	})
}
