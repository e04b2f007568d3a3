// Package bigmem allocates the large, short-lived buffers of a release (the
// rows DP_TRAIN reads into memory) so that their first writes are cheap.
//
// A buffer of n·d float64 values for 10⁶ rows is 160 MB of memory the Go
// heap usually takes fresh from the kernel (the scavenger returns the
// previous call's pages between calls). Each first write to a 4 KiB page is a
// page fault, and on the VMs dpsql is measured on a fault costs ≈ 20 µs of
// CPU and 30–90 µs of wall time (docs/results/speed.md, "the data path"):
// 1.1–3.5 s to fill 160 MB, against 0.05–0.09 s advised as here. Make
// advises the kernel to back such a buffer with transparent huge pages
// (madvise MADV_HUGEPAGE, Linux; 2 MiB a fault) before anything writes it.
// It helps where a 2 MiB range has no page mapped (memory fresh from the
// kernel, or wholly returned); where the scavenger returned a range only in
// part the kernel still faults 4 KiB pages, and heap memory still mapped
// costs no fault either way.
// The advice changes only how memory is mapped: the buffer is an ordinary
// Go slice, zeroed, freed by the garbage collector; where the kernel has no
// huge pages (or THP is off) it is a no-op, and the allocation's size, never
// the data, decides whether it is made. The cost: the advice stays on the
// addresses after the collector frees the buffer (the heap reuses them with
// huge pages), and khugepaged may fill a huge page the scavenger returned
// in part back in, so between calls the resident memory can stay nearer
// the heap's peak than without it (why the Go runtime stopped advising its
// whole heap in Go 1.21.1); only the row buffers' addresses are advised
// here, and the peak itself is bounded by --max-release-memory.
//
// Get and Put (pool.go) go further for the buffers a release owns from
// start to end (DP_TRAIN's rows, logreg's scaled copy): Put zeroes a
// buffer on every core and keeps it, Get hands a kept buffer of the same
// type and a fitting length back, so the next call neither faults nor
// zeroes on one core. What is kept is zeros only, never a protected value;
// at most PoolLimit bytes (the engine sets a quarter of the release memory,
// ≤ 1 GiB), dropped to the collector after PoolIdle without use. Put ends a
// buffer's life: a caller that kept a slice of it would see the next
// call's rows, so Put is only called where the release that read the rows
// has returned (functions: after the model is trained).
//
// Imports: none of dpsql (standard library only). Any package may use it.
package bigmem
