package fastpath

import "unsafe"

// Boxing parsed numbers without an allocation each (issue 13).
//
// Putting a float64 or an int64 into an `any` allocates 8 bytes for the
// value (runtime.convT64); for a bulk load of DOUBLE columns that is one
// allocation per field, ≈ 0.5 µs of a 20-column row plus the GC's share. A
// numSlab instead stores the values in a slab of numSlabLen values and
// builds each interface pointing at its slot: one allocation per slab. The
// interface is exactly the one the compiler builds (the type's descriptor
// and a pointer to the value), a slot is written once before its interface
// exists and never again, and a live interface keeps its slab alive.

// numSlabLen is the values per slab (16 KiB, a small-object size class).
const numSlabLen = 2048

type numSlab struct {
	f []float64
	i []int64
}

// eface is the layout of an empty interface.
type eface struct {
	typ, data unsafe.Pointer
}

func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

var (
	float64Type = typeOf(float64(0))
	int64Type   = typeOf(int64(0))
)

func boxAt(typ, p unsafe.Pointer) (v any) {
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, p
	return v
}

// float returns f as an any (a nil slab boxes as usual).
func (s *numSlab) float(f float64) any {
	if s == nil {
		return f
	}
	return boxNext(&s.f, float64Type, f)
}

// int returns n as an any (a nil slab boxes as usual).
func (s *numSlab) int(n int64) any {
	if s == nil {
		return n
	}
	return boxNext(&s.i, int64Type, n)
}

// boxNext stores x in the next slot of slab (a new slab when it is used
// up) and returns the interface of type typ pointing at it.
func boxNext[T float64 | int64](slab *[]T, typ unsafe.Pointer, x T) any {
	if len(*slab) == 0 {
		*slab = make([]T, numSlabLen)
	}
	p := &(*slab)[0]
	*p = x
	*slab = (*slab)[1:]
	return boxAt(typ, unsafe.Pointer(p))
}
