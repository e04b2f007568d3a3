//go:build linux

package bigmem

import (
	"syscall"
	"unsafe"
)

// adviseHuge advises [base+off, base+off+n) for transparent huge pages. An
// error (a kernel without THP) leaves ordinary pages: it is advice only.
func adviseHuge(base unsafe.Pointer, off, n uintptr) {
	b := unsafe.Slice((*byte)(unsafe.Add(base, off)), n)
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}
