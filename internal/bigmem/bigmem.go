package bigmem

import "unsafe"

// MinBytes is the smallest buffer advised: below a few huge pages the
// unaligned ends (which stay 4 KiB pages) are most of it.
const MinBytes = 8 << 20

// hugePage is the transparent huge page size on amd64 and arm64 Linux.
const hugePage = 2 << 20

// Make returns a zeroed []T of length n whose backing memory, if it is at
// least MinBytes, is advised for huge pages before it is first written
// (the whole 2 MiB-aligned part of it).
func Make[T any](n int) []T {
	s := make([]T, n)
	var z T
	size := uintptr(n) * unsafe.Sizeof(z)
	if n == 0 || size < MinBytes {
		return s
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := (start + hugePage - 1) &^ (hugePage - 1)
	hi := (start + size) &^ (hugePage - 1)
	if hi > lo {
		adviseHuge(unsafe.Pointer(unsafe.SliceData(s)), lo-start, hi-lo)
	}
	return s
}
