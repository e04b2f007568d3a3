//go:build amd64 && !purego

#include "textflag.h"

// The AVX2 + FMA kernels of the binary gradient pass and of XᵀX
// (kernel_amd64.go says what they compute; logreg.md §6 and §13 why their
// order of operations is inside the charged rounding bounds).
// Hand-written; no branch depends on a value: every jump below tests a
// public count (groups, F/4, F mod 4, the columns of XᵀX), and both run
// with flush-to-zero (FTZ_DAZ) so that no value takes a slow path.

// Constants, four copies each (a ymm memory operand). The bits are those
// of the Go constants of expFixed/expReduce/residual
// (TestAVX2Constants parses this table and compares).
#define C4(off, v) DATA binc<>+(off)(SB)/8, $v; DATA binc<>+(off+8)(SB)/8, $v; DATA binc<>+(off+16)(SB)/8, $v; DATA binc<>+(off+24)(SB)/8, $v

C4(0, 0x4089000000000000) // 800
C4(32, 0xc089000000000000) // -800
C4(64, 0x3ff71547652b82fe) // log2e
C4(96, 0x4338000000000000) // shift = 1.5·2⁵²
C4(128, 0x3fe62e42fee00000) // ln2Hi
C4(160, 0x3dea39ef35793c76) // ln2Lo
C4(192, 0x3ff0000000000000) // 1
C4(224, 0x3fe0000000000000) // 0.5
C4(256, 0x3fc5555555555555) // 1/6
C4(288, 0x3fa5555555555555) // 1/24
C4(320, 0x3f81111111111111) // 1/120
C4(352, 0x3f56c16c16c16c17) // 1/720
C4(384, 0x3f2a01a01a01a01a) // 1/5040
C4(416, 0x3efa01a01a01a01a) // 1/40320
C4(448, 0x3ec71de3a556c734) // 1/362880
C4(480, 0x3e927e4fb7789f5c) // 1/3628800
C4(512, 0x3e5ae64567f544e4) // 1/39916800
C4(544, 0x3e21eed8eff8d898) // 1/479001600
C4(576, 0x0000000000000800) // int64 2048
C4(608, 0x00000000000007ff) // int64 2047
C4(640, 0xffffffffffffffff) // int64 -1
C4(672, 0x4330000000000000) // 2⁵² (int64 y ↦ float64, 0 ≤ y < 2⁵²)
C4(704, 0x8000000000000000) // sign bit
GLOBL binc<>(SB), RODATA|NOPTR, $736

#define K_MAX binc<>+0(SB)
#define K_MIN binc<>+32(SB)
#define K_LOG2E binc<>+64(SB)
#define K_SHIFT binc<>+96(SB)
#define K_LN2HI binc<>+128(SB)
#define K_LN2LO binc<>+160(SB)
#define K_ONE binc<>+192(SB)
#define K_HALF binc<>+224(SB)
#define K_C6 binc<>+256(SB)
#define K_C24 binc<>+288(SB)
#define K_C120 binc<>+320(SB)
#define K_C720 binc<>+352(SB)
#define K_C5040 binc<>+384(SB)
#define K_C40320 binc<>+416(SB)
#define K_C362880 binc<>+448(SB)
#define K_C3628800 binc<>+480(SB)
#define K_C39916800 binc<>+512(SB)
#define K_C479001600 binc<>+544(SB)
#define K_I2048 binc<>+576(SB)
#define K_I2047 binc<>+608(SB)
#define K_IM1 binc<>+640(SB)
#define K_MAGIC binc<>+672(SB)
#define K_SIGN binc<>+704(SB)

// PAIR sets dst = b0·[m0] + b1·[m1] as one product and one FMA (two
// rounding steps at most: the pair sums of the kernels' trees); MPAIR is
// PAIR on the last F mod 4 columns, loaded under the mask Y15 into t0, t1.
#define PAIR(m0, m1, b0, b1, dst) VMULPD m1, b1, dst; VFMADD231PD m0, b0, dst
#define MPAIR(m0, m1, t0, t1, b0, b1, dst) VMASKMOVPD m0, Y15, t0; VMASKMOVPD m1, Y15, t1; VMULPD t1, b1, dst; VFMADD231PD t0, b0, dst

// FTZ_DAZ saves MXCSR in saved and sets flush-to-zero (bit 15) and
// denormals-are-zero (bit 6) until the kernel restores it: a subnormal
// input or result (eˣ below 2⁻¹⁰²², σ of a score beyond ≈ 708, tiny
// products) otherwise takes a slow path on this CPU too — a pass whose
// scores saturate ran 2.7× slower per row — so the time would depend on
// the values. Flushing moves a value by less than 2⁻¹⁰²² and never raises
// a magnitude (logreg.md §6).
#define FTZ_DAZ(saved, tmp) STMXCSR saved; MOVL saved, R12; ORL $0x8040, R12; MOVL R12, tmp; LDMXCSR tmp

// func binaryGroupsAVX2(x, theta, out *float64, y *int, rclip *float64, groups, f int, tail *[4]int64)
//
// Registers: AX the group's first row, R13 the current 4-column chunk of
// it (rows 1–3 at +R8, +2·R8, +R9 = 3·R8), R12 the chunk's byte offset
// into theta and out (both padded to a multiple of 4), R10 = 32·⌊F/4⌋,
// R11 the tail mask (nil: F is a multiple of 4), Y15 the mask itself.
TEXT ·binaryGroupsAVX2(SB), NOSPLIT, $8-64
	FTZ_DAZ(mxcsr-4(SP), tmp-8(SP))
	MOVQ x+0(FP), AX
	MOVQ theta+8(FP), BX
	MOVQ out+16(FP), CX
	MOVQ y+24(FP), DX
	MOVQ rclip+32(FP), SI
	MOVQ groups+40(FP), DI
	MOVQ f+48(FP), R8
	MOVQ tail+56(FP), R11
	MOVQ R8, R10
	SHRQ $2, R10
	SHLQ $5, R10 // 32·⌊F/4⌋
	SHLQ $3, R8  // row stride in bytes
	LEAQ (R8)(R8*2), R9
	TESTQ R11, R11
	JEQ  nomask
	VMOVDQU (R11), Y15

nomask:
	TESTQ DI, DI
	JEQ  done

group:
	// Scores: four per-row ymm partial sums of θ·xᵣ over the chunks.
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ   R12, R12
	MOVQ   AX, R13
	TESTQ  R10, R10
	JEQ    dottail

dotloop:
	// Prefetch 2 KiB (≈ 12 rows) ahead of each row: the block streams
	// from memory, and the hardware prefetcher alone left ≈ 30 % of the
	// pass waiting on it (n = 10⁶, F = 21). A prefetch never faults, so
	// running past the last row is harmless; its address is public.
	PREFETCHT0  2048(R13)
	PREFETCHT0  2048(R13)(R8*1)
	PREFETCHT0  2048(R13)(R8*2)
	PREFETCHT0  2048(R13)(R9*1)
	VMOVUPD     (BX)(R12*1), Y4
	VFMADD231PD (R13), Y4, Y0
	VFMADD231PD (R13)(R8*1), Y4, Y1
	VFMADD231PD (R13)(R8*2), Y4, Y2
	VFMADD231PD (R13)(R9*1), Y4, Y3
	ADDQ        $32, R12
	ADDQ        $32, R13
	CMPQ        R12, R10
	JB          dotloop

dottail:
	TESTQ R11, R11
	JEQ   hsum
	VMOVUPD     (BX)(R12*1), Y4 // padded with zeros
	VMASKMOVPD  (R13), Y15, Y5
	VFMADD231PD Y5, Y4, Y0
	VMASKMOVPD  (R13)(R8*1), Y15, Y5
	VFMADD231PD Y5, Y4, Y1
	VMASKMOVPD  (R13)(R8*2), Y15, Y5
	VFMADD231PD Y5, Y4, Y2
	VMASKMOVPD  (R13)(R9*1), Y15, Y5
	VFMADD231PD Y5, Y4, Y3

hsum:
	// Y4 = (s₀, s₁, s₂, s₃): each (p₀ + p₁) + (p₂ + p₃) of its row's lanes.
	VHADDPD    Y1, Y0, Y0
	VHADDPD    Y3, Y2, Y2
	VPERM2F128 $0x20, Y2, Y0, Y4
	VPERM2F128 $0x31, Y2, Y0, Y5
	VADDPD     Y5, Y4, Y4

	// expFixed(−s), lane by lane, the operations of the Go version (FMA
	// where Go has a product then a sum). Clamp to [−800, 800] with the
	// argument as the second source so that NaN stays NaN.
	VXORPD  K_SIGN, Y4, Y4
	VMOVUPD K_MAX, Y5
	VMINPD  Y4, Y5, Y4
	VMOVUPD K_MIN, Y5
	VMAXPD  Y4, Y5, Y4

	// t = x·log2e + 1.5·2⁵², kf = t − 1.5·2⁵² = round(x/ln 2), k = the
	// integer in t's low bits; r = (x − kf·ln2Hi) − kf·ln2Lo.
	VMOVUPD      K_SHIFT, Y5
	VFMADD231PD  K_LOG2E, Y4, Y5
	VSUBPD       K_SHIFT, Y5, Y6
	VPSUBQ       K_SHIFT, Y5, Y7
	VFNMADD231PD K_LN2HI, Y6, Y4
	VFNMADD231PD K_LN2LO, Y6, Y4

	// Estrin: r², r⁴, r⁸; lo = (q0 + r²q1) + r⁴(q2 + r²q3),
	// hi = (q4 + r²q5) + r⁴/12!, poly = lo + r⁸·hi.
	VMULPD       Y4, Y4, Y8
	VMULPD       Y8, Y8, Y9
	VMULPD       Y9, Y9, Y10
	VADDPD       K_ONE, Y4, Y0
	VMOVUPD      K_C6, Y1
	VFMADD213PD  K_HALF, Y4, Y1
	VMOVUPD      K_C120, Y2
	VFMADD213PD  K_C24, Y4, Y2
	VMOVUPD      K_C5040, Y3
	VFMADD213PD  K_C720, Y4, Y3
	VFMADD231PD  Y8, Y1, Y0
	VFMADD231PD  Y8, Y3, Y2
	VFMADD231PD  Y9, Y2, Y0
	VMOVUPD      K_C362880, Y1
	VFMADD213PD  K_C40320, Y4, Y1
	VMOVUPD      K_C39916800, Y3
	VFMADD213PD  K_C3628800, Y4, Y3
	VFMADD231PD  Y8, Y3, Y1
	VFMADD231PD  K_C479001600, Y9, Y1
	VFMADD231PD  Y10, Y1, Y0

	// Times 2^k₁ and 2^(k−k₁), k₁ = ⌊k/2⌋ = h − 1024 with
	// h = (k + 2048) >> 1 (|k| ≤ 1155: a logical shift suffices); the
	// exponent fields are h − 1 and k + 2047 − h.
	VPADDQ K_I2048, Y7, Y11
	VPSRLQ $1, Y11, Y11
	VPADDQ K_IM1, Y11, Y12
	VPSLLQ $52, Y12, Y12
	VPADDQ K_I2047, Y7, Y13
	VPSUBQ Y11, Y13, Y13
	VPSLLQ $52, Y13, Y13
	VMULPD Y12, Y0, Y0
	VMULPD Y13, Y0, Y0

	// σ = 1/(1 + e), NaN ↦ ½ (a blend, no branch); r = σ − y, y ∈ ℕ
	// converted through 2⁵²; r ← max(−c, min(r, c)), c = rclip[i].
	VADDPD    K_ONE, Y0, Y0
	VMOVUPD   K_ONE, Y1
	VDIVPD    Y0, Y1, Y1
	VCMPPD    $3, Y1, Y1, Y2
	VBLENDVPD Y2, K_HALF, Y1, Y1
	VMOVDQU   (DX), Y3
	VPADDQ    K_MAGIC, Y3, Y3
	VSUBPD    K_MAGIC, Y3, Y3
	VSUBPD    Y3, Y1, Y1
	VMOVUPD   (SI), Y2
	VMINPD    Y2, Y1, Y1
	VXORPD    K_SIGN, Y2, Y2
	VMAXPD    Y2, Y1, Y1

	// out += (r₀x₀ + r₁x₁) + (r₂x₂ + r₃x₃), one addition to out per group.
	VPERMPD $0x00, Y1, Y4
	VPERMPD $0x55, Y1, Y5
	VPERMPD $0xaa, Y1, Y6
	VPERMPD $0xff, Y1, Y7
	XORQ    R12, R12
	MOVQ    AX, R13
	TESTQ   R10, R10
	JEQ     axtail

axloop:
	PAIR((R13), (R13)(R8*1), Y4, Y5, Y0)
	PAIR((R13)(R8*2), (R13)(R9*1), Y6, Y7, Y1)
	VADDPD      Y1, Y0, Y0
	VADDPD      (CX)(R12*1), Y0, Y0
	VMOVUPD     Y0, (CX)(R12*1)
	ADDQ        $32, R12
	ADDQ        $32, R13
	CMPQ        R12, R10
	JB          axloop

axtail:
	TESTQ R11, R11
	JEQ   next
	MPAIR((R13), (R13)(R8*1), Y2, Y3, Y4, Y5, Y0)
	MPAIR((R13)(R8*2), (R13)(R9*1), Y2, Y3, Y6, Y7, Y1)
	VADDPD      Y1, Y0, Y0
	VADDPD      (CX)(R12*1), Y0, Y0
	VMOVUPD     Y0, (CX)(R12*1)

next:
	LEAQ (AX)(R8*4), AX
	ADDQ $32, DX
	ADDQ $32, SI
	DECQ DI
	JNZ  group

done:
	LDMXCSR mxcsr-4(SP)
	VZEROUPPER
	RET

// func gramGroupsAVX2(x, out *float64, groups, f int, tail *[4]int64)
//
// Adds Σᵣ xᵣxᵣᵀ over groups·8 consecutive rows to out, an F × F4 square
// (F4 = ⌈F/4⌉·4, row-major), entry (i, j) for every 4-column chunk from
// the one holding the diagonal on (the entries left of the diagonal in
// that chunk are computed and never read). Per entry and group:
// ((x₀ᵢx₀ⱼ + x₁ᵢx₁ⱼ) + (x₂ᵢx₂ⱼ + x₃ᵢx₃ⱼ)) + ((…₄ + …₅) + (…₆ + …₇)), each
// pair one product and one FMA, then one addition to out: gramRows8's
// tree. Registers: AX, BX rows 0 and 4 of the group; CX out's row i; DX
// 8·i; R12, R13, DI the chunk in rows 0–3, rows 4–7 and out; SI the
// chunks left; R10 = ⌊F/4⌋; R11/Y15 the tail mask; Y0–Y7 the eight xᵣᵢ.
TEXT ·gramGroupsAVX2(SB), $32-40
	FTZ_DAZ(mxcsr-28(SP), tmp-32(SP))
	MOVQ out+8(FP), CX
	MOVQ CX, outBase-8(SP)
	MOVQ groups+16(FP), DX
	MOVQ DX, left-16(SP)
	MOVQ f+24(FP), R8
	MOVQ R8, R10
	SHRQ $2, R10      // ⌊F/4⌋
	LEAQ 3(R8), R9
	ANDQ $-4, R9
	SHLQ $3, R9
	MOVQ R9, outStride-24(SP) // 8·F4
	SHLQ $3, R8       // row stride in bytes
	LEAQ (R8)(R8*2), R9
	MOVQ x+0(FP), AX
	LEAQ (AX)(R8*4), BX
	MOVQ tail+32(FP), R11
	TESTQ R11, R11
	JEQ  gnomask
	VMOVDQU (R11), Y15

gnomask:
	TESTQ DX, DX
	JEQ  gdone

ggroup:
	MOVQ outBase-8(SP), CX
	XORQ DX, DX

gcol:
	LEAQ (AX)(DX*1), R12
	LEAQ (BX)(DX*1), R13
	VBROADCASTSD (R12), Y0
	VBROADCASTSD (R12)(R8*1), Y1
	VBROADCASTSD (R12)(R8*2), Y2
	VBROADCASTSD (R12)(R9*1), Y3
	VBROADCASTSD (R13), Y4
	VBROADCASTSD (R13)(R8*1), Y5
	VBROADCASTSD (R13)(R8*2), Y6
	VBROADCASTSD (R13)(R9*1), Y7
	MOVQ DX, SI
	ANDQ $-32, SI     // 32·⌊i/4⌋: the diagonal's chunk
	LEAQ (AX)(SI*1), R12
	LEAQ (BX)(SI*1), R13
	LEAQ (CX)(SI*1), DI
	SHRQ $5, SI
	NEGQ SI
	ADDQ R10, SI      // full chunks from there on
	JEQ  gtail

gloop:
	PAIR((R12), (R12)(R8*1), Y0, Y1, Y8)
	PAIR((R12)(R8*2), (R12)(R9*1), Y2, Y3, Y9)
	VADDPD      Y9, Y8, Y8
	PAIR((R13), (R13)(R8*1), Y4, Y5, Y10)
	PAIR((R13)(R8*2), (R13)(R9*1), Y6, Y7, Y11)
	VADDPD      Y11, Y10, Y10
	VADDPD      Y10, Y8, Y8
	VADDPD      (DI), Y8, Y8
	VMOVUPD     Y8, (DI)
	ADDQ        $32, R12
	ADDQ        $32, R13
	ADDQ        $32, DI
	DECQ        SI
	JNZ         gloop

gtail:
	TESTQ R11, R11
	JEQ   gnext
	MPAIR((R12), (R12)(R8*1), Y12, Y13, Y0, Y1, Y8)
	MPAIR((R12)(R8*2), (R12)(R9*1), Y12, Y13, Y2, Y3, Y9)
	VADDPD      Y9, Y8, Y8
	MPAIR((R13), (R13)(R8*1), Y12, Y13, Y4, Y5, Y10)
	MPAIR((R13)(R8*2), (R13)(R9*1), Y12, Y13, Y6, Y7, Y11)
	VADDPD      Y11, Y10, Y10
	VADDPD      Y10, Y8, Y8
	VADDPD      (DI), Y8, Y8
	VMOVUPD     Y8, (DI)

gnext:
	ADDQ outStride-24(SP), CX
	ADDQ $8, DX
	CMPQ DX, R8
	JB   gcol
	LEAQ (AX)(R8*8), AX
	LEAQ (BX)(R8*8), BX
	DECQ left-16(SP)
	JNZ  ggroup

gdone:
	LDMXCSR mxcsr-28(SP)
	VZEROUPPER
	RET

// func getMXCSR() uint32 — for the tests: MXCSR as the caller sees it
// (the kernels must leave it as they found it).
TEXT ·getMXCSR(SB), NOSPLIT, $8-4
	STMXCSR tmp-4(SP)
	MOVL    tmp-4(SP), AX
	MOVL    AX, ret+0(FP)
	RET
