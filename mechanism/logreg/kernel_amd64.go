//go:build amd64 && !purego

package logreg

import "golang.org/x/sys/cpu"

// haveAVX2 reports whether binaryGroupsAVX2 may run: AVX2 and FMA, with
// the OS saving the ymm registers (x/sys/cpu checks both).
var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// binaryGroupsAVX2 adds the clipped binary gradient terms of groups·4
// consecutive rows (x: their F values each, row-major; y, rclip: their
// labels and clamps) to out, four rows at a time (kernel_amd64.s): the
// four scores θ·xᵣ (per-row ymm partial sums over 4-column chunks, then a
// horizontal sum), expFixed(−s) on the four lanes with the same
// operations as the Go version, σ = 1/(1 + e) with NaN ↦ ½ by a blend,
// r = σ − y clamped to ±rclip, then out += (r₀x₀ + r₁x₁) + (r₂x₂ + r₃x₃).
// theta and out hold ⌈F/4⌉·4 values, the padding zero in theta; tail masks
// the last F mod 4 columns of a row (nil when F is a multiple of 4), which
// are read with masked loads, so nothing past the last row is touched.
// The same instructions run for every value, NaN and ±Inf included.
//
//go:noescape
func binaryGroupsAVX2(x, theta, out *float64, y *int, rclip *float64, groups, f int, tail *[4]int64)

// gramGroupsAVX2 adds the upper triangle of Σᵣ xᵣxᵣᵀ over groups·8
// consecutive rows (F values each) to out, an F × ⌈F/4⌉·4 square
// (row-major; entries left of the diagonal's 4-column chunk untouched,
// those left of the diagonal in it not meaningful), with gramRows8's
// order: the eight products of an entry as a tree of depth 3, then one
// addition to out (kernel_amd64.s). tail as for binaryGroupsAVX2.
//
//go:noescape
func gramGroupsAVX2(x, out *float64, groups, f int, tail *[4]int64)

// getMXCSR returns the SSE control and status register (tests: the
// kernels set flush-to-zero and denormals-are-zero and must restore it).
func getMXCSR() uint32
