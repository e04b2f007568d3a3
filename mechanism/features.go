package mechanism

import (
	"fmt"
	"math"
)

// Scaler maps a raw feature row to the unit ball using public bounds only.
//
// Each feature j is mapped affinely from its declared bounds [Lo[j], Hi[j]]
// to [−1, 1] and clipped there (NaN, e.g. from NULL, maps to 0). If Intercept
// is set a constant 1 is appended. The vector is then divided by √F, with F
// the resulting dimension, so that ‖x‖₂ ≤ 1 for every possible row: κ ≤ 1
// holds by construction, not by looking at the data.
//
// Transforms (optional, one per feature, "" or TransformIdentity for none)
// are the owner-declared public transforms (CALL dp_transform): each raw
// value v is replaced by T(v) before the affine map, and Lo, Hi are bounds
// on the transformed scale. A released model keeps them, so predictions
// apply the same T to raw rows.
type Scaler struct {
	Lo         []float64 `json:"lo"`
	Hi         []float64 `json:"hi"`
	Intercept  bool      `json:"intercept"`
	Transforms []string  `json:"transforms,omitempty"`
}

// Public transforms an owner may declare on a column (CALL dp_transform).
const (
	TransformIdentity = "identity"
	TransformLog1p    = "log1p"
)

// ValidTransform reports whether name is a known transform (lower case).
func ValidTransform(name string) bool {
	return name == "" || name == TransformIdentity || name == TransformLog1p
}

// ApplyTransform is the one definition of every public transform, used by
// every DP read (functions/dpread.go) and by Scaler. It is a fixed function
// of one value: log1p(v) = ln(1 + v) for v > −1, −Inf for v ≤ −1 (so the
// following clip to the declared bounds maps it to the lower bound); NaN
// (NULL) stays NaN. Unknown names are rejected when declared, never here.
func ApplyTransform(name string, v float64) float64 {
	if name != TransformLog1p || math.IsNaN(v) {
		return v
	}
	if v <= -1 {
		return math.Inf(-1)
	}
	return math.Log1p(v)
}

// InverseTransform maps a value on the transformed scale back to the raw
// scale (for regression labels): expm1 for log1p.
func InverseTransform(name string, v float64) float64 {
	if name != TransformLog1p {
		return v
	}
	return math.Expm1(v)
}

// WithTransforms returns a copy of s whose rows are transformed by ts (one
// per feature) before scaling. All identity: no transform is recorded.
func (s Scaler) WithTransforms(ts []string) (Scaler, error) {
	some := false
	for j, t := range ts {
		if !ValidTransform(t) {
			return s, fmt.Errorf("scaler: unknown transform %q of feature %d", t, j)
		}
		some = some || (t != "" && t != TransformIdentity)
	}
	s.Transforms = nil
	if !some {
		return s, nil
	}
	if len(ts) != len(s.Lo) {
		return s, fmt.Errorf("scaler: %d transforms for %d features", len(ts), len(s.Lo))
	}
	s.Transforms = append([]string(nil), ts...)
	return s, nil
}

func (s Scaler) transform(j int) string {
	if j < len(s.Transforms) {
		return s.Transforms[j]
	}
	return ""
}

// NewScaler validates public bounds and returns a Scaler.
func NewScaler(lo, hi []float64, intercept bool) (Scaler, error) {
	if len(lo) != len(hi) || len(lo) == 0 {
		return Scaler{}, fmt.Errorf("scaler: need the same non-zero number of lower and upper bounds, got %d and %d", len(lo), len(hi))
	}
	for j := range lo {
		if !(lo[j] < hi[j]) || math.IsInf(lo[j], 0) || math.IsInf(hi[j], 0) {
			return Scaler{}, fmt.Errorf("scaler: bounds of feature %d must be finite with lower < upper, got [%v, %v]", j, lo[j], hi[j])
		}
	}
	return Scaler{Lo: append([]float64(nil), lo...), Hi: append([]float64(nil), hi...), Intercept: intercept}, nil
}

// Dim returns the dimension of a transformed row (features plus intercept).
func (s Scaler) Dim() int {
	if s.Intercept {
		return len(s.Lo) + 1
	}
	return len(s.Lo)
}

// Transform writes the scaled row into dst (allocated if too short) and
// returns it. len(x) must equal the number of features.
func (s Scaler) Transform(dst, x []float64) []float64 {
	f := s.Dim()
	if cap(dst) < f {
		dst = make([]float64, f)
	}
	dst = dst[:f]
	inv := 1 / math.Sqrt(float64(f))
	for j, v := range x {
		dst[j] = unitInterval(ApplyTransform(s.transform(j), v), s.Lo[j], s.Hi[j]) * inv
	}
	if s.Intercept {
		dst[f-1] = inv
	}
	return dst
}

// unitInterval maps v from [lo, hi] to [−1, 1], clipping; NaN maps to 0.
func unitInterval(v, lo, hi float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	z := 2*(v-lo)/(hi-lo) - 1
	if z < -1 {
		return -1
	}
	if z > 1 {
		return 1
	}
	return z
}

// Clip returns v clipped to [lo, hi]; NaN maps to the midpoint.
func Clip(v, lo, hi float64) float64 {
	switch {
	case math.IsNaN(v):
		return lo + (hi-lo)/2
	case v < lo:
		return lo
	case v > hi:
		return hi
	}
	return v
}

// Prepared is a Scaler with its affine maps precomputed, for hot loops:
// Transform then costs one multiply-add and a clamp per value.
type Prepared struct {
	tf        []string // nil: no transform
	mul, add  []float64
	inv       float64
	intercept bool
	f         int
}

// Prepare precomputes the per-feature maps v ↦ v·mul + add = 2(v−lo)/(hi−lo) − 1.
func (s Scaler) Prepare() Prepared {
	p := Prepared{mul: make([]float64, len(s.Lo)), add: make([]float64, len(s.Lo)), intercept: s.Intercept, f: s.Dim()}
	for j := range s.Lo {
		p.mul[j] = 2 / (s.Hi[j] - s.Lo[j])
		p.add[j] = -1 - s.Lo[j]*p.mul[j]
	}
	p.inv = 1 / math.Sqrt(float64(p.f))
	if s.Transforms != nil {
		p.tf = append([]string(nil), s.Transforms...)
	}
	return p
}

// Dim returns the dimension of a transformed row.
func (p *Prepared) Dim() int { return p.f }

// Transform is Scaler.Transform with the precomputed maps. The result can
// differ from Scaler.Transform in the last bits; both clamp to [−1, 1]
// before scaling, so ‖x‖₂ ≤ 1 holds either way.
func (p *Prepared) Transform(dst, x []float64) []float64 {
	if cap(dst) < p.f {
		dst = make([]float64, p.f)
	}
	dst = dst[:p.f]
	mul, add := p.mul[:len(x)], p.add[:len(x)]
	for j, v := range x {
		if p.tf != nil {
			v = ApplyTransform(p.tf[j], v)
		}
		z := v*mul[j] + add[j]
		switch {
		case z != z: // NaN (NULL)
			z = 0
		case z < -1:
			z = -1
		case z > 1:
			z = 1
		}
		dst[j] = z * p.inv
	}
	if p.intercept {
		dst[p.f-1] = p.inv
	}
	return dst
}
