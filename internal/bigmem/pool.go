package bigmem

import (
	"reflect"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// Get and Put keep the large buffers of a finished release for the next
// one. A DP_TRAIN call on 10⁶ × 20 allocates ≈ 400 MB of row buffers; the
// Go heap zeroes each on one core and, once the scavenger has returned the
// previous call's pages, faults them in again (≈ 20 µs of CPU per fault on
// the VMs dpsql is measured on). A buffer given back with Put is zeroed
// there, at once and on every core, so the pool never holds a value of a
// protected row: what it keeps is zeros and their resident pages. Kept
// buffers are dropped (left to the collector) once no Get or Put happened
// for PoolIdle, and the pool never keeps more than PoolLimit bytes.
var (
	// PoolLimit is the most bytes the pools keep together.
	PoolLimit uintptr = 1 << 30
	// PoolIdle is how long kept buffers outlive the last Get or Put.
	PoolIdle = 30 * time.Second
)

// PoolMin is the smallest buffer the pools keep: a megabyte is 256 faults
// of 4 KiB when fresh from the kernel.
const PoolMin = 1 << 20

type pool struct {
	free [][]byte // each the backing of a []T, as bytes (typed by key)
}

var pools = struct {
	sync.Mutex
	byType map[reflect.Type]*pool
	bytes  uintptr
	timer  *time.Timer
}{byType: map[reflect.Type]*pool{}}

// Get returns a zeroed []T of length n: a kept buffer of capacity in
// [n, 2n] (the smallest; zeroed to its capacity) if there is one, else
// Make(n). Buffers below PoolMin are plain make.
func Get[T any](n int) []T {
	var z T
	if n <= 0 || uintptr(n)*unsafe.Sizeof(z) < PoolMin {
		return make([]T, max(n, 0))
	}
	t := reflect.TypeFor[T]()
	pools.Lock()
	touch()
	if p := pools.byType[t]; p != nil {
		best := -1
		for i, b := range p.free {
			c := uintptr(len(b)) / unsafe.Sizeof(z)
			if c >= uintptr(n) && c <= 2*uintptr(n) && (best < 0 || len(b) < len(p.free[best])) {
				best = i
			}
		}
		if best >= 0 {
			b := p.free[best]
			p.free = append(p.free[:best], p.free[best+1:]...)
			pools.bytes -= uintptr(len(b))
			pools.Unlock()
			s := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b))/unsafe.Sizeof(z))
			return s[:n]
		}
	}
	pools.Unlock()
	return Make[T](n)
}

// Put zeroes s to its capacity and keeps it for Get. The caller must not
// use s, or anything sliced from it, afterwards: Put is the end of its
// life, as if the collector had freed it.
func Put[T any](s []T) {
	var z T
	s = s[:cap(s)]
	size := uintptr(len(s)) * unsafe.Sizeof(z)
	if size < PoolMin {
		return
	}
	clearParallel(s)
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), size)
	t := reflect.TypeFor[T]()
	pools.Lock()
	defer pools.Unlock()
	touch()
	if pools.bytes+size > PoolLimit {
		return
	}
	p := pools.byType[t]
	if p == nil {
		p = &pool{}
		pools.byType[t] = p
	}
	p.free = append(p.free, b)
	pools.bytes += size
}

// touch (re)arms the idle timer; pools must be locked.
func touch() {
	if pools.timer == nil {
		pools.timer = time.AfterFunc(PoolIdle, drop)
		return
	}
	pools.timer.Reset(PoolIdle)
}

// drop forgets every kept buffer (the collector frees them).
func drop() {
	pools.Lock()
	defer pools.Unlock()
	for _, p := range pools.byType {
		p.free = nil
	}
	pools.bytes = 0
}

// clearParallel zeroes s, one contiguous part per core.
func clearParallel[T any](s []T) {
	parts := max(1, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := range parts {
		lo, hi := w*len(s)/parts, (w+1)*len(s)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			clear(s[lo:hi])
		}()
	}
	wg.Wait()
}
