//go:build !amd64 || purego

package logreg

// haveAVX2 is false off amd64 (or with the purego tag): the Go kernel runs.
const haveAVX2 = false

func binaryGroupsAVX2(x, theta, out *float64, y *int, rclip *float64, groups, f int, tail *[4]int64) {
	panic("logreg: binaryGroupsAVX2 without AVX2") // unreachable: haveAVX2 is false
}

func gramGroupsAVX2(x, out *float64, groups, f int, tail *[4]int64) {
	panic("logreg: gramGroupsAVX2 without AVX2") // unreachable: haveAVX2 is false
}

func getMXCSR() uint32 { return 0 }
