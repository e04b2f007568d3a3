package budget

import (
	"math"
	"math/big"
)

// Mode is a table's accounting mode, fixed once anything is spent.
type Mode string

const (
	Basic Mode = "basic" // sequential composition (default)
	RDP   Mode = "rdp"   // basic OR a Rényi-DP filter, whichever is cheaper
)

// eventCost is the basic-composition cost of a release's events: the exact
// decimal sums Σε, Σδ rounded up once per release (rounding each event up
// would make a budget of 1 refuse three events of ε = 1/3).
type eventCost struct {
	eps, delta uint64
}

// costOf returns the basic cost of a release. requested is the (ε, δ) the
// caller asked for: a mechanism that splits it over k events in float64
// (δ·0.3 + δ·0.7) may sum to a decimal a few ulp above it, which rounded up
// to units would refuse a release asking exactly what remains. A sum within
// (k+1)·2⁻⁵⁰ relative of the request is charged the request itself
// (docs/privacy/accounting.md, "Rounding").
func costOf(events []Event, requested [2]float64) eventCost {
	se, sd := new(big.Rat), new(big.Rat)
	for _, e := range events {
		se.Add(se, decimalRat(e.Epsilon))
		sd.Add(sd, decimalRat(e.Delta))
	}
	tol := splitTolerance(len(events))
	return eventCost{
		eps:   ratToUnits(snapToRequest(se, requested[0], tol), epsScale, true),
		delta: ratToUnits(snapToRequest(sd, requested[1], tol), deltaScale, true),
	}
}

// splitTolerance is the relative float64 error of splitting a request over
// k events and summing them: far below the samplers' own scale inflation.
func splitTolerance(k int) *big.Rat {
	return new(big.Rat).SetFrac(big.NewInt(int64(k)+1), new(big.Int).Lsh(big.NewInt(1), 50))
}

// snapToRequest returns the request's decimal when sum exceeds it by at most
// tol relative, and sum otherwise (below the request, or far above it: a
// release whose events cost more than it asked is charged their cost).
func snapToRequest(sum *big.Rat, requested float64, tol *big.Rat) *big.Rat {
	if !finite(requested) || requested <= 0 {
		return sum
	}
	req := decimalRat(requested)
	if sum.Cmp(req) <= 0 {
		return sum
	}
	limit := new(big.Rat).Mul(req, new(big.Rat).Add(big.NewRat(1, 1), tol))
	if sum.Cmp(limit) <= 0 {
		return req
	}
	return sum
}

// releaseRDP returns the release's RDP at each order in units, rounded up
// (the float sum is raised by its worst-case rounding error first).
func releaseRDP(orders []float64, events []Event) []uint64 {
	out := make([]uint64, len(orders))
	slack := 1 + float64(len(events)+1)*0x1p-50
	for i, a := range orders {
		var s float64
		for _, e := range events {
			s += eventRDP(e, a)
		}
		out[i] = floatUnitsUp(s*slack, epsScale)
	}
	return out
}

// deltaEvents is the δ that events may use: all of it in basic mode, all but
// the conversion reserve in rdp mode.
func (a *account) deltaEvents() uint64 { return a.DeltaTotal - a.DeltaConv }

// rdpEps returns, in units rounded up, the ε of the Rényi filter for the
// curve rdp: min over the orders of the CKS conversion at δ_conv/k, k the
// number of orders (union bound, since the order is chosen after the fact).
func (a *account) rdpEps(rdp []uint64) uint64 {
	if a.Mode != RDP || a.DeltaConv == 0 || len(a.Orders) == 0 {
		return unitsInf
	}
	r := make([]float64, len(rdp))
	for i, u := range rdp {
		r[i] = unitsFloat(u, epsDigits, true)
	}
	dc := unitsFloat(a.DeltaConv, deltaDigits, false)
	eps, _ := convert(a.Orders, r, dc, len(a.Orders))
	if math.IsInf(eps, 1) {
		return unitsInf
	}
	return floatUnitsUp(eps*(1+convRelMargin)+1e-12, epsScale)
}

// spent returns the table's reported spend (ε, δ) in units for the state
// (eps, delta, rdp). Basic: (Σε, Σδ). RDP: ε = min(Σε, filter ε) and
// δ = Σδ + δ_conv, the reserve being counted as spent from the start.
func (a *account) spent(eps, delta uint64, rdp []uint64) (uint64, uint64) {
	if a.Mode != RDP {
		return eps, delta
	}
	if r := a.rdpEps(rdp); r < eps {
		eps = r
	}
	return eps, addSat(delta, a.DeltaConv)
}

// admits reports whether the filter admits the state (eps, delta, rdp).
// Basic: Σε ≤ ε_total and Σδ ≤ δ_total. RDP: Σδ ≤ δ_total − δ_conv and
// (Σε ≤ ε_total or the Rényi filter's ε ≤ ε_total).
func (a *account) admits(eps, delta uint64, rdp []uint64) bool {
	if delta > a.deltaEvents() {
		return false
	}
	if eps <= a.EpsTotal {
		return true
	}
	return a.Mode == RDP && a.rdpEps(rdp) <= a.EpsTotal
}

// withTotals returns a copy of a with new totals (and the rdp reserve that
// goes with them); the spend is shared, not copied.
func (a *account) withTotals(epsTotal, deltaTotal uint64) account {
	b := *a
	b.EpsTotal, b.DeltaTotal = epsTotal, deltaTotal
	b.DeltaConv = 0
	if b.Mode == RDP {
		b.DeltaConv = deltaTotal / conversionShare
	}
	return b
}

func addVec(a, b []uint64) []uint64 {
	out := make([]uint64, len(a))
	for i := range a {
		out[i] = addSat(a[i], b[i])
	}
	return out
}
