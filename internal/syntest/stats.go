package syntest

import "math"

// MeanSD returns the mean and the sample standard deviation (n − 1) of v;
// the deviation is 0 for fewer than two values.
func MeanSD(v []float64) (float64, float64) {
	var s float64
	for _, x := range v {
		s += x
	}
	m := s / float64(len(v))
	if len(v) < 2 {
		return m, 0
	}
	var q float64
	for _, x := range v {
		q += (x - m) * (x - m)
	}
	return m, math.Sqrt(q / float64(len(v)-1))
}
