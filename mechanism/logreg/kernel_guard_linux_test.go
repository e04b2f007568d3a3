package logreg

import (
	"math"
	"syscall"
	"testing"
	"unsafe"
)

// TestAVX2GuardPage places the rows so that the last one ends exactly at
// a page followed by an inaccessible page: a kernel that read a byte past
// the last row (instead of masking the last F mod 4 columns) would crash
// the test. Binary pass and XᵀX, F of every residue mod 4, the AVX2 and
// the Go kernel; the results must agree as in TestAVX2MatchesGo.
func TestAVX2GuardPage(t *testing.T) {
	needAVX2(t)
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[page:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	for _, f := range []int{1, 3, 5, 21} {
		n := 16 // four binary groups, two Gram groups
		off := page - n*f*8
		x := unsafe.Slice((*float64)(unsafe.Pointer(&mem[off])), n*f)
		for i := range x {
			x[i] = float64(i%7-3) / 7 / math.Sqrt(float64(f))
		}
		y := make([]int, n)
		for i := range y {
			y[i] = i % 2
		}
		p := kernelProblem(x, y, f, 0.25)
		buf := p.newChunkBuf()
		theta := make([]float64, f)
		for j := range theta {
			theta[j] = float64(j%5) - 2
		}
		got, want := make([]float64, f), make([]float64, f)
		p.simd = true
		p.chunkGrad(0, theta, got, &buf)
		g1 := p.gram()
		p.simd = false
		p.chunkGrad(0, theta, want, &buf)
		g0 := p.gram()
		for j := range got {
			if math.Abs(got[j]-want[j]) > 1e-14*float64(n) {
				t.Fatalf("F=%d entry %d: avx2 %v, go %v", f, j, got[j], want[j])
			}
		}
		for j := range g1 {
			if math.Abs(g1[j]-g0[j]) > 1e-14*float64(n) {
				t.Fatalf("F=%d Gram entry %d: avx2 %v, go %v", f, j, g1[j], g0[j])
			}
		}
	}
}
