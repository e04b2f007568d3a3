// Package bigmem allocates the large, short-lived buffers of a release (the
// rows DP_TRAIN reads into memory) so that their first writes are cheap.
//
// A buffer of n·d float64 values for 10⁶ rows is 160 MB of memory the Go
// heap usually takes fresh from the kernel (the scavenger returns the
// previous call's pages between calls). Each first write to a 4 KiB page is a
// page fault, and on the VMs dpsql is measured on a fault costs ≈ 25 µs of
// CPU and ≈ 85 µs of wall time (docs/results/speed.md, "the data path"):
// 3.5 s to fill 160 MB, against 0.05 s for memory already mapped. Make
// advises the kernel to back such a buffer with transparent huge pages
// (madvise MADV_HUGEPAGE, Linux; 2 MiB a fault) before anything writes it.
// The advice changes only how memory is mapped: the buffer is an ordinary
// Go slice, zeroed, freed by the garbage collector; where the kernel has no
// huge pages (or THP is off) it is a no-op, and the allocation's size, never
// the data, decides whether it is made.
//
// Imports: none of dpsql (standard library only). Any package may use it.
package bigmem
