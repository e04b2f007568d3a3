package mysqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/dpsql/dpsql/functions"
)

// Pushed-down statistics. DP_TRAIN linreg's statistics use the fast DOUBLE
// statement (linearFast); the exact DECIMAL statement below stays as the
// audit reference (LinearStatsExact). In the exact statements each per-row term is computed by the backend
// with the IEEE double operations of the embedded path (the literals are
// the shortest decimal forms of dpsql's float64 constants, which MariaDB
// parses back to the same doubles), converted to DECIMAL (MariaDB converts
// a double to its shortest round-trip decimal: relative error ≤ 2⁻⁵³) and
// summed exactly as DECIMAL; the sum is rounded to float64 once here. The
// result therefore does not depend on the row order or on how Spider
// splits the rows across shards, and it differs from the exact sum of the
// per-row doubles by at most 2·2⁻⁵³·Σ|term| (+ 10⁻³⁸ per row for the
// DECIMAL scale), far inside the rounding allowances of the mechanisms
// (linreg's γ_depth with depth ≥ 512, mean's SumSlack).

// linScale is the DECIMAL scale of the linear statistics' terms (|term| ≤ 1,
// so 27 integer digits remain: sums of up to 10²⁷ rows).
const linScale = "DECIMAL(65,38)"

// meanScale is the DECIMAL scale of DP_MEAN's terms (≤ 10²⁰, see ShiftedSum).
const meanScale = "DECIMAL(65,30)"

// lit renders a float64 as a MariaDB double literal that parses back to it.
func lit(v float64) string {
	return "(" + strconv.FormatFloat(v, 'e', -1, 64) + ")"
}

func finite(v ...float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func numeric(k kind) bool { return k == kindInt || k == kindUint || k == kindFloat }

// clipExpr is mechanism.Clip(v, lo, hi) with NULL → null: LEAST/GREATEST
// of doubles return one of their arguments, as Go's comparisons do.
func clipExpr(col string, null, lo, hi float64) string {
	return "LEAST(GREATEST(COALESCE(" + quote(col) + ", " + lit(null) + "), " + lit(lo) + "), " + lit(hi) + ")"
}

// ShiftedSum implements functions.Pushdown: n and Σ fl(clip(v) − lo),
// exactly (DECIMAL) or as DOUBLE in the backend's order.
func (b *Backend) ShiftedSum(db, name, col string, lo, hi float64, exact bool) (float64, int64, bool, error) {
	t, ok := b.lookup(db, name)
	if !ok {
		return 0, 0, false, nil
	}
	term, ok := meanTerm(t, col, lo, hi, exact)
	if !ok {
		return 0, 0, false, nil
	}
	out, n, err := b.aggregate(t, []string{term})
	if err != nil {
		return 0, 0, true, err
	}
	return out[0], n, true, nil
}

// meanTerm is ShiftedSum's per-row term fl(clip(v) − lo); ok = false when
// the column or the bounds do not allow it (public facts).
func meanTerm(t *table, col string, lo, hi float64, exact bool) (string, bool) {
	names, kinds, err := t.columns([]string{col})
	if err != nil || !numeric(kinds[0]) {
		return "", false
	}
	w := hi - lo
	// Terms lie in [0, w]: 10⁻⁸ ≤ w keeps the DECIMAL scale's 10⁻³⁰ far
	// below a rounding of the term, w ≤ 10²⁰ keeps n·w inside 35 digits.
	if !finite(lo, hi, w) || !(w >= 1e-8 && w <= 1e20) {
		return "", false
	}
	null := lo + (hi-lo)/2 // mechanism.Clip's NULL value, computed as it does
	if !exact {
		// The same double per row (LEAST/GREATEST return an argument, the
		// subtraction is one IEEE operation), summed as DOUBLE: the DECIMAL
		// conversion is most of this statement's cost. Literals through
		// rowLit (Spider re-prints them, see there).
		return "LEAST(GREATEST(COALESCE(" + quote(names[0]) + ", " + rowLit(null) + "), " + rowLit(lo) + "), " + rowLit(hi) + ") - " + rowLit(lo), true
	}
	return "CAST(" + clipExpr(names[0], null, lo, hi) + " - " + lit(lo) + " AS " + meanScale + ")", true
}

// CentredLinearStats implements functions.Pushdown: the label mean's sum
// (ShiftedSum's statement), then the statistics of the map centre returns
// (LinearStats or LinearStatsExact), on one connection in one snapshot.
// Whether both statements can be written is decided from public facts
// before anything is read (the map with LabelShift 0); a map centre
// returns that cannot be written (|LabelShift| > 10³⁰¹, impossible with
// bounds within ±10³⁰⁰) ends the snapshot with ok = false.
func (b *Backend) CentredLinearStats(db, name string, m functions.LinearMap, lo, hi float64, meanExact, exact bool,
	centre func(sum float64, n int64) (functions.LinearMap, error)) ([]float64, []float64, int64, bool, error) {
	t, ok := b.lookup(db, name)
	if !ok {
		return nil, nil, 0, false, nil
	}
	term, ok := meanTerm(t, m.Label, lo, hi, meanExact)
	if !ok {
		return nil, nil, 0, false, nil
	}
	m.LabelShift, m.ShiftAlgebraic = 0, false
	if _, _, ok := statsParts(t, m, exact); !ok {
		return nil, nil, 0, false, nil
	}
	var a, c []float64
	var n int64
	pushed := true
	err := b.snapshot(context.Background(), func(conn *sql.Conn) error {
		out, nMean, err := b.runParts(conn, t, []aggPart{{terms: []string{term}}})
		if err != nil {
			return err
		}
		mc, err := centre(out[0], nMean)
		if err != nil {
			return err
		}
		parts, asm, ok := statsParts(t, mc, exact)
		if !ok {
			pushed = false
			return nil
		}
		if out, n, err = b.runParts(conn, t, parts); err != nil {
			return err
		}
		a, c = asm(out, n)
		return nil
	})
	if !pushed {
		return nil, nil, 0, false, nil
	}
	if err != nil {
		return nil, nil, 0, true, err
	}
	return a, c, n, true, nil
}

// statsParts returns the statements of LinearStats (exact = false: the
// in-box split) or LinearStatsExact and how their sums become A and c.
func statsParts(t *table, m functions.LinearMap, exact bool) ([]aggPart, func([]float64, int64) ([]float64, []float64), bool) {
	if exact {
		terms, f, ok := linearTerms(t, m)
		if !ok {
			return nil, nil, false
		}
		return []aggPart{{terms: terms}}, func(out []float64, _ int64) ([]float64, []float64) { return exactAssemble(out, f) }, true
	}
	fs, ok := linearFast(t, m)
	if !ok {
		return nil, nil, false
	}
	return fs.parts(true), fs.assemble, true
}

// LinearStats implements functions.Pushdown with the fast statement
// (linearFast): DOUBLE sums in whatever order the backend adds, within the
// any-order rounding allowance linreg plans for (linreg.Config.AnyOrderSums).
// Where the map allows it the statement is split at a public box (see
// fastStats): the rows inside it are summed with the clamps left out, the
// others with them, in one snapshot, and dpsql adds the two partial sums.
func (b *Backend) LinearStats(db, name string, m functions.LinearMap) ([]float64, []float64, int64, bool, error) {
	return b.linearStats(db, name, m, true)
}

// LinearStatsOneStatement is LinearStats without the in-box split: one
// statement with every value clamped (the same sums up to the order of
// additions). For tests and cmd/scalebench.
func (b *Backend) LinearStatsOneStatement(db, name string, m functions.LinearMap) ([]float64, []float64, int64, bool, error) {
	return b.linearStats(db, name, m, false)
}

func (b *Backend) linearStats(db, name string, m functions.LinearMap, split bool) ([]float64, []float64, int64, bool, error) {
	t, ok := b.lookup(db, name)
	if !ok {
		return nil, nil, 0, false, nil
	}
	fs, ok := linearFast(t, m)
	if !ok {
		return nil, nil, 0, false, nil
	}
	out, n, err := b.aggregateParts(t, fs.parts(split))
	if err != nil {
		return nil, nil, 0, true, err
	}
	a, c := fs.assemble(out, n)
	return a, c, n, true, nil
}

// LinearStatsExact is the exact statement (linearTerms): every per-row term
// of the embedded path computed bit for bit and summed as DECIMAL, so the
// result does not depend on the row order or on the shard split. It is the
// audit reference (tests, cmd/scalebench); releases use LinearStats.
func (b *Backend) LinearStatsExact(db, name string, m functions.LinearMap) ([]float64, []float64, int64, bool, error) {
	t, ok := b.lookup(db, name)
	if !ok {
		return nil, nil, 0, false, nil
	}
	terms, f, ok := linearTerms(t, m)
	if !ok {
		return nil, nil, 0, false, nil
	}
	out, n, err := b.aggregate(t, terms)
	if err != nil {
		return nil, nil, 0, true, err
	}
	a, c := exactAssemble(out, f)
	return a, c, n, true, nil
}

// exactAssemble turns the exact statement's sums (linearTerms' order) into
// A (F×F, both triangles) and c.
func exactAssemble(out []float64, f int) (a, c []float64) {
	a, c = make([]float64, f*f), make([]float64, f)
	i := 0
	for j := 0; j < f; j++ {
		for k := j; k < f; k++ {
			a[j*f+k], a[k*f+j] = out[i], out[i]
			i++
		}
	}
	copy(c, out[i:])
	return a, c
}

// LinearStatsQuery returns the aggregate statements LinearStats sends
// (exact = false: two with the in-box split, else one), or the one
// LinearStatsExact sends (exact = true), for benchmarks that run them
// directly on the backend.
func (b *Backend) LinearStatsQuery(db, name string, m functions.LinearMap, exact bool) ([]string, bool) {
	t, ok := b.lookup(db, name)
	if !ok {
		return nil, false
	}
	if exact {
		terms, _, ok := linearTerms(t, m)
		if !ok {
			return nil, false
		}
		return []string{aggregateSQL(t, terms)}, true
	}
	fs, ok := linearFast(t, m)
	if !ok {
		return nil, false
	}
	var qs []string
	for _, p := range fs.parts(true) {
		qs = append(qs, p.sql(t))
	}
	return qs, true
}

// LinearStatsOneStatementQuery is the statement LinearStatsOneStatement
// sends.
func (b *Backend) LinearStatsOneStatementQuery(db, name string, m functions.LinearMap) (string, bool) {
	t, ok := b.lookup(db, name)
	if !ok {
		return "", false
	}
	fs, ok := linearFast(t, m)
	if !ok {
		return "", false
	}
	return aggregateSQL(t, fs.terms), true
}

// fastStats is the fast statement of the linear statistics and how its
// sums become A and c.
//
// Each feature enters as u_j = clamp(v·mul_j + add_j, −1, 1), the embedded
// path's value before its final factor inv (Prepared.Transform computes
// z_j = fl(u_j·inv)); the label as y′, exactly as the embedded path. The
// statement sums u_j·u_k (j ≤ k), u_j (for the intercept), u_j·y′ and y′ as
// DOUBLE; dpsql multiplies by fl(inv·inv) or inv afterwards. Every per-row
// SQL value is bit for bit the embedded one (the same IEEE operations);
// only the summation order (and the place of the factor inv) differs, which
// docs/scale-out.md §"Fast pushdown" bounds by γ_{n+8}·Σ|z_j z_k|, the
// allowance linreg adds when planned with AnyOrderSums.
//
// The u_j expression is as short as the public map allows, because MariaDB
// re-evaluates it in each of the F + 1 terms it enters: with mul = 1 and
// add = 0 (bounds [−1, 1]) it is LEAST(GREATEST(v, −1), 1); the overflow
// guard (an inner clamp to ±10³⁰⁰/mul) is only written when v·mul + add
// could overflow (mul > ½ or |add| > 10³⁰⁷).
//
// The in-box split. MariaDB has no common-subexpression elimination, so the
// clamps cost more than the products (≈ 2.5× the plain aggregate). Inside a
// public box — every DOUBLE feature v with v ∈ [a_j, b_j], where the clamp
// provably changes nothing, and the label inside its bounds — each value
// equals its unclamped expression bit for bit, so the rows there are summed
// with inTerms (the plain aggregate plus ≈ 1 comparison per column and
// row) under `WHERE (box) IS TRUE`, and all other rows (outside, or with a
// NULL: the predicate is then NULL, and NULL IS TRUE is false) with the
// clamped terms under `WHERE (box) IS NOT TRUE`. Every row is in exactly
// one part, with the very per-row values of the one-statement form; dpsql
// adds the two partial sums, one more node of a summation tree over the
// same n terms, which the any-order bound γ_{n+8} already covers.
type fastStats struct {
	terms     []string
	inTerms   []string // the same terms inside the box (nil: no split)
	box       []string // the per-column conditions of the box
	d, f      int
	intercept bool
	inv       float64
	// inShift, when set, turns the inside part's sums of the raw label
	// into those of the shifted, mapped label (LinearMap.ShiftAlgebraic).
	inShift *shiftFix
}

// shiftFix maps sums of u·y and y over the rows inside the box to sums of
// u·y′ and y′, y′ = (y − off)/half, off = s + mid, exactly: the inside
// part has the sums Σu_j (the intercept column) and the count it needs.
type shiftFix struct {
	off, half *big.Rat
	d         int
}

func (f *shiftFix) apply(sums []*big.Rat, count int64) {
	d := f.d
	base := d * (d + 1) / 2 // Σu_j u_k, then Σu_j, then Σu_j·y, then Σy
	t := new(big.Rat)
	for j := 0; j < d; j++ {
		uy, u := sums[base+d+j], sums[base+j]
		uy.Sub(uy, t.Mul(f.off, u))
		uy.Quo(uy, f.half)
	}
	y := sums[base+2*d]
	y.Sub(y, t.Mul(f.off, new(big.Rat).SetInt64(count)))
	y.Quo(y, f.half)
}

// aggPart is one statement of a release: COUNT(*) and SUM(term)… over
// the rows where holds (every row when empty), in groups when group is
// set (the statement then returns one row per group).
type aggPart struct {
	terms []string
	where string
	group string
	fix   *shiftFix // applied to each row's sums before they are added
}

func (p aggPart) sql(t *table) string {
	q := aggregateSQL(t, p.terms)
	if p.where != "" {
		q += " WHERE " + p.where
	}
	if p.group != "" {
		q += " GROUP BY " + p.group
	}
	return q
}

// parts returns the statements of the fast statistics: the in-box split
// when asked for and possible, else the one clamped statement.
//
// The part outside the box is grouped by the first column whose condition
// fails. This works around Spider (10.11): with a pushed-down aggregate
// the head evaluates the WHERE again on one row made of MIN(column) of
// each shard's matching rows, and drops the shard's sums when that row
// fails — so a condition whose rows' column-wise minima can fail it (the
// outside of a box: (2, 0) and (0, 2) are outside [−1, 1]², their minima
// (0, 0) inside) loses whole shards. Within a group j the columns before
// j are inside their intervals (so are their minima: intervals are
// convex) and column j is outside or NULL (the minimum of such values is
// one of them), so the row of minima is in the same group and fails the
// box: every group the shards return is kept. The part inside the box is
// safe as it is (its minima lie in the box). Any backend gives the same
// sums for this grouping; dpsql adds the groups' sums.
func (fs fastStats) parts(split bool) []aggPart {
	if !split || fs.inTerms == nil {
		return []aggPart{{terms: fs.terms}}
	}
	box := "(" + strings.Join(fs.box, " AND ") + ")"
	var first strings.Builder
	first.WriteString("CASE")
	for j, c := range fs.box {
		fmt.Fprintf(&first, " WHEN (%s) IS NOT TRUE THEN %d", c, j+1)
	}
	first.WriteString(" ELSE 0 END")
	return []aggPart{
		{terms: fs.inTerms, where: box + " IS TRUE", fix: fs.inShift},
		{terms: fs.terms, where: box + " IS NOT TRUE", group: first.String()},
	}
}

// unitBox returns the largest interval [a, b] of doubles found on which
// fl(fl(v·mul) + add) ∈ [−1, 1], i.e. where Prepared.Transform's clamp
// changes nothing. fl(v·mul) (mul > 0) and fl(· + add) are monotone, so
// checking the two ends suffices; the ends start at the real solutions
// and step inward one ulp at a time until the check holds.
func unitBox(mul, add float64) (a, b float64, ok bool) {
	u := func(v float64) float64 { return v*mul + add }
	a, b = (-1-add)/mul, (1-add)/mul
	if !finite(a, b) {
		return 0, 0, false
	}
	for i := 0; u(a) < -1 || u(a) > 1; i++ {
		if i == 64 {
			return 0, 0, false
		}
		a = math.Nextafter(a, math.Inf(1))
	}
	for i := 0; u(b) > 1 || u(b) < -1; i++ {
		if i == 64 {
			return 0, 0, false
		}
		b = math.Nextafter(b, math.Inf(-1))
	}
	return a, b, a <= b
}

func linearFast(t *table, m functions.LinearMap) (fastStats, bool) {
	d := len(m.Features)
	if d == 0 || len(m.Mul) != d || len(m.Add) != d || !finite(m.Inv, m.LabelLo, m.LabelHi, m.Mid, m.Half, m.LabelNull) || !(m.Half > 0) || !(m.Inv > 0) {
		return fastStats{}, false
	}
	if math.Abs(m.LabelLo) > 1e300 || math.Abs(m.LabelHi) > 1e300 || math.Abs(m.Mid) > 1e300 {
		return fastStats{}, false
	}
	names, kinds, err := t.columns(append(append([]string(nil), m.Features...), m.Label))
	if err != nil {
		return fastStats{}, false
	}
	for _, k := range kinds {
		if !numeric(k) {
			return fastStats{}, false
		}
	}
	u, uIn := make([]string, d), make([]string, d)
	var box []string
	for j := 0; j < d; j++ {
		mul, add := m.Mul[j], m.Add[j]
		if !finite(mul, add) || !(mul > 0) || math.Abs(add) >= 1e299 {
			return fastStats{}, false
		}
		v := quote(names[j])
		// Inside the box the clamp is the identity: the bare column (or
		// v·mul + add, which cannot overflow there: |v·mul| ≤ 1 + |add|).
		// Other column types keep the clamped form (its LEAST/GREATEST
		// also converts them to DOUBLE) and add no condition.
		uIn[j] = ""
		if a, b, ok := unitBox(mul, add); ok && t.isDouble(names[j]) {
			box = append(box, boxCond(v, a, b))
			if mul == 1 && add == 0 {
				uIn[j] = v
			} else {
				uIn[j] = "(" + v + " * " + rowLit(mul) + " + " + rowLit(add) + ")"
			}
		}
		if mul == 1 && add == 0 {
			// fl(v·1 + 0) = v for every finite v (−0 becomes +0, which no
			// product or sum distinguishes): no arithmetic, no overflow.
			u[j] = "LEAST(GREATEST(" + v + ", -1e0), 1e0)"
			if uIn[j] == "" {
				uIn[j] = u[j]
			}
			continue
		}
		if mul > 0.5 || math.Abs(add) > 1e307 {
			// |v·mul + add| ≤ ½·1.8·10³⁰⁸ + 10³⁰⁷ cannot overflow otherwise.
			if big := 1e300 / mul; !math.IsInf(big, 0) {
				v = "LEAST(GREATEST(" + v + ", " + rowLit(-big) + "), " + rowLit(big) + ")"
			}
		}
		u[j] = "LEAST(GREATEST(" + v + " * " + rowLit(m.Mul[j]) + " + " + rowLit(add) + ", -1e0), 1e0)"
		if uIn[j] == "" {
			uIn[j] = u[j]
		}
	}
	// y′ = clamp((clip(y) − mid)/half, −1, 1) with clip's NULL value. When
	// that NULL value maps to exactly 0 the COALESCE is dropped (SUM skips
	// NULL: the same sum); with mid = 0, half = 1 and bounds inside [−1, 1]
	// the arithmetic and the outer clamp change nothing and are dropped.
	yv, ok := shiftedLabel(quote(names[d]), m.LabelShift)
	if !ok {
		return fastStats{}, false
	}
	yRaw := yv
	if (m.LabelNull-m.Mid)/m.Half != 0 {
		yv = "COALESCE(" + yv + ", " + rowLit(m.LabelNull) + ")"
	}
	y := "LEAST(GREATEST(" + yv + ", " + rowLit(m.LabelLo) + "), " + rowLit(m.LabelHi) + ")"
	short := m.Mid == 0 && m.Half == 1 && m.LabelLo >= -1 && m.LabelHi <= 1
	if !short {
		y = "LEAST(GREATEST((" + y + " - " + rowLit(m.Mid) + ") / " + rowLit(m.Half) + ", -1e0), 1e0)"
	}
	// Inside the label bounds clip is the identity (NULL is never inside:
	// no COALESCE); fl(fl(v − mid)/half) is monotone, so the outer clamp is
	// dropped when the two bounds map into [−1, 1].
	yIn := y
	inBox := false
	var algebraic *shiftFix
	if t.isDouble(names[d]) {
		col := quote(names[d])
		switch {
		case m.LabelShift == 0:
			box = append(box, boxCond(yRaw, m.LabelLo, m.LabelHi))
			yIn, inBox = yRaw, true
		default:
			// Centred: the box on the raw column (a plain column condition,
			// as for the features), [a, b] the doubles whose fl(y − s) lies
			// in the label bounds; inside, |y| ≤ 10³⁰² and fl(y − s) needs
			// no overflow guard (the terms are evaluated only on rows that
			// pass the WHERE).
			if a, b, ok := shiftBox(m.LabelLo, m.LabelHi, m.LabelShift); ok {
				box = append(box, boxCond(col, a, b))
				yIn, inBox = "("+col+" - "+rowLit(m.LabelShift)+")", true
				if m.ShiftAlgebraic && m.Intercept {
					// The raw label inside; the shift and the label map
					// through the sums (shiftFix).
					off := new(big.Rat).Add(new(big.Rat).SetFloat64(m.LabelShift), new(big.Rat).SetFloat64(m.Mid))
					algebraic = &shiftFix{off: off, half: new(big.Rat).SetFloat64(m.Half), d: d}
					yIn, inBox = col, false
				}
			}
		}
	}
	if inBox {
		yRaw = yIn
		if !short {
			yIn = "(" + yRaw + " - " + rowLit(m.Mid) + ") / " + rowLit(m.Half)
			if lo, hi := (m.LabelLo-m.Mid)/m.Half, (m.LabelHi-m.Mid)/m.Half; lo >= -1 && hi <= 1 {
				yIn = "(" + yIn + ")"
			} else {
				yIn = "LEAST(GREATEST(" + yIn + ", -1e0), 1e0)"
			}
		}
	}
	fs := fastStats{d: d, f: d, intercept: m.Intercept, inv: m.Inv}
	if m.Intercept {
		fs.f++
	}
	fs.terms = productTerms(u, y, m.Intercept)
	if len(box) > 0 {
		fs.inTerms = productTerms(uIn, yIn, m.Intercept)
		fs.box = box
		fs.inShift = algebraic
	}
	return fs, true
}

// productTerms lists the fast statement's terms (in assemble's order) from
// the per-row feature values u and label value y.
func productTerms(u []string, y string, intercept bool) []string {
	d := len(u)
	var terms []string
	for j := 0; j < d; j++ {
		for k := j; k < d; k++ {
			terms = append(terms, u[j]+" * "+u[k])
		}
	}
	if intercept {
		terms = append(terms, u...)
	}
	for j := 0; j < d; j++ {
		terms = append(terms, u[j]+" * "+y)
	}
	if intercept {
		terms = append(terms, y)
	}
	return terms
}

// assemble turns the statement's sums (in the order of terms) into A (F×F,
// both triangles) and c.
func (fs fastStats) assemble(out []float64, n int64) (a, c []float64) {
	f, d := fs.f, fs.d
	inv2 := fs.inv * fs.inv
	a, c = make([]float64, f*f), make([]float64, f)
	i := 0
	for j := 0; j < d; j++ {
		for k := j; k < d; k++ {
			a[j*f+k] = out[i] * inv2
			a[k*f+j] = a[j*f+k]
			i++
		}
	}
	if fs.intercept {
		for j := 0; j < d; j++ {
			a[j*f+d] = out[i] * inv2
			a[d*f+j] = a[j*f+d]
			i++
		}
		a[d*f+d] = float64(n) * inv2
	}
	for j := 0; j < d; j++ {
		c[j] = out[i] * fs.inv
		i++
	}
	if fs.intercept {
		c[d] = out[i] * fs.inv
	}
	return a, c
}

// linearTerms builds the per-row terms of A (upper triangle, row-major)
// then c; ok = false when the map cannot be evaluated exactly in SQL.
func linearTerms(t *table, m functions.LinearMap) ([]string, int, bool) {
	d := len(m.Features)
	if d == 0 || len(m.Mul) != d || len(m.Add) != d || !finite(m.Inv, m.LabelLo, m.LabelHi, m.Mid, m.Half, m.LabelNull) || !(m.Half > 0) {
		return nil, 0, false
	}
	// clip(y) − mid must not overflow (MariaDB would raise an error where
	// Go gives ±Inf): with |bounds| ≤ 10³⁰⁰ it cannot.
	if math.Abs(m.LabelLo) > 1e300 || math.Abs(m.LabelHi) > 1e300 || math.Abs(m.Mid) > 1e300 {
		return nil, 0, false
	}
	names, kinds, err := t.columns(append(append([]string(nil), m.Features...), m.Label))
	if err != nil {
		return nil, 0, false
	}
	for _, k := range kinds {
		if !numeric(k) {
			return nil, 0, false
		}
	}
	z := make([]string, 0, d+1)
	for j := 0; j < d; j++ {
		mul, add := m.Mul[j], m.Add[j]
		if !finite(mul, add) || !(mul > 0) || math.Abs(add) >= 1e299 {
			return nil, 0, false
		}
		// Go computes clamp(v·mul + add, −1, 1)·inv. Clamping v to
		// [−big, big] first keeps v·mul + add finite (MariaDB raises an
		// error on overflow where Go gets ±Inf) and changes nothing Go
		// would compute: beyond big, v·mul dominates add and both clamp
		// to ±1. When 10³⁰⁰/mul overflows, mul < 10⁻⁸ and no double v can
		// overflow: no inner clamp. NULL stays NULL, and SUM skips the
		// term: the same sum as Go's 0·x.
		v := quote(names[j])
		if big := 1e300 / mul; !math.IsInf(big, 0) {
			v = "LEAST(GREATEST(" + v + ", " + lit(-big) + "), " + lit(big) + ")"
		}
		z = append(z, "(LEAST(GREATEST("+v+" * "+lit(mul)+" + "+lit(add)+", -1e0), 1e0) * "+lit(m.Inv)+")")
	}
	f := d
	if m.Intercept {
		z = append(z, lit(m.Inv))
		f++
	}
	yv, ok := shiftedLabel(quote(names[d]), m.LabelShift)
	if !ok {
		return nil, 0, false
	}
	clipY := "LEAST(GREATEST(COALESCE(" + yv + ", " + lit(m.LabelNull) + "), " + lit(m.LabelLo) + "), " + lit(m.LabelHi) + ")"
	y := "LEAST(GREATEST((" + clipY + " - " + lit(m.Mid) + ") / " + lit(m.Half) + ", -1e0), 1e0)"
	var terms []string
	for j := 0; j < f; j++ {
		for k := j; k < f; k++ {
			terms = append(terms, "CAST("+z[j]+" * "+z[k]+" AS "+linScale+")")
		}
	}
	for j := 0; j < f; j++ {
		terms = append(terms, "CAST("+z[j]+" * "+y+" AS "+linScale+")")
	}
	return terms, f, true
}

func aggregateSQL(t *table, terms []string) string {
	var q strings.Builder
	q.WriteString("SELECT COUNT(*)")
	for _, s := range terms {
		q.WriteString(", SUM(")
		q.WriteString(s)
		q.WriteString(")")
	}
	q.WriteString(" FROM ")
	q.WriteString(t.from())
	return q.String()
}

// aggregate runs SELECT COUNT(*), SUM(term)… FROM t in one snapshot and
// returns the sums rounded to float64 (an empty table sums to 0).
func (b *Backend) aggregate(t *table, terms []string) ([]float64, int64, error) {
	return b.aggregateParts(t, []aggPart{{terms: terms}})
}

// aggregateParts runs the statements of parts (each with the same number
// of terms, over disjoint sets of rows) in one snapshot and returns, per
// term, the exact sum of their sums rounded to float64 once, and the sum
// of their counts.
func (b *Backend) aggregateParts(t *table, parts []aggPart) ([]float64, int64, error) {
	var out []float64
	var n int64
	err := b.snapshot(context.Background(), func(c *sql.Conn) error {
		var err error
		out, n, err = b.runParts(c, t, parts)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return out, n, nil
}

// runParts is aggregateParts on a connection whose snapshot is open.
func (b *Backend) runParts(c *sql.Conn, t *table, parts []aggPart) ([]float64, int64, error) {
	nt := len(parts[0].terms)
	sums := make([]*big.Rat, nt)
	for i := range sums {
		sums[i] = new(big.Rat)
	}
	var total int64
	raw := make([]sql.NullString, nt)
	var n int64
	dest := make([]any, 1+nt)
	dest[0] = &n
	for i := range raw {
		dest[i+1] = &raw[i]
	}
	for _, p := range parts {
		if len(p.terms) != nt {
			return nil, 0, fmt.Errorf("aggregate over %s: parts with %d and %d terms", t.from(), nt, len(p.terms))
		}
		rows, err := c.QueryContext(context.Background(), p.sql(t))
		if err != nil {
			return nil, 0, b.fail("aggregate over "+t.from(), err)
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, 0, b.fail("aggregate over "+t.from(), err)
			}
			total += n
			row := make([]*big.Rat, nt)
			for i, r := range raw {
				row[i] = new(big.Rat)
				if !r.Valid {
					continue // SUM of no rows
				}
				if _, ok := row[i].SetString(r.String); !ok {
					rows.Close()
					return nil, 0, fmt.Errorf("%w: aggregate over %s: unparsable sum %q", functions.ErrBackend, t.from(), r.String)
				}
			}
			if p.fix != nil {
				p.fix.apply(row, n)
			}
			for i, v := range row {
				sums[i].Add(sums[i], v)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, 0, b.fail("aggregate over "+t.from(), err)
		}
	}
	out := make([]float64, nt)
	for i, v := range sums {
		out[i], _ = v.Float64() // nearest float64, ties to even
	}
	return out, total, nil
}

// CountOutside implements functions.Pushdown: the rows whose col is not
// NULL and lies outside [lo, hi] (owners' dp_bounds check; one statement).
func (b *Backend) CountOutside(db, name, col string, lo, hi float64) (int64, bool, error) {
	t, ok := b.lookup(db, name)
	if !ok {
		return 0, false, nil
	}
	names, kinds, err := t.columns([]string{col})
	if err != nil || !numeric(kinds[0]) || !finite(lo, hi) {
		return 0, false, nil
	}
	v := quote(names[0])
	var n int64
	q := "SELECT COUNT(*) FROM " + t.from() + " WHERE " + v + " < " + lit(lo) + " OR " + v + " > " + lit(hi)
	if err := b.pool.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
		return 0, true, b.fail("check bounds on "+t.from(), err)
	}
	return n, true, nil
}

// shiftedLabel is the raw label minus shift (DP_LSQ's centring) as Go
// computes fl(v − shift), NULL staying NULL. The value is first clamped to
// ±10³⁰⁵ so that the subtraction cannot overflow (MariaDB raises an error
// where Go gets ±Inf); with |shift| ≤ 10³⁰¹ and label bounds within ±10³⁰⁰
// (linearFast, linearTerms) a clamped value minus shift is still beyond the
// bounds on the same side, so the clip gives what Go's does.
func shiftedLabel(col string, shift float64) (string, bool) {
	if shift == 0 {
		return col, true
	}
	if !finite(shift) || math.Abs(shift) > 1e301 {
		return "", false
	}
	return "(LEAST(GREATEST(" + col + ", -1e305), 1e305) - " + rowLit(shift) + ")", true
}

// shiftBox returns an interval [a, b] of doubles on which
// lo ≤ fl(y − s) ≤ hi. fl(y − s) is monotone in y, so checking the two
// ends suffices; they start at lo + s, hi + s and step inward one ulp at a
// time until the check holds (as unitBox).
func shiftBox(lo, hi, s float64) (a, b float64, ok bool) {
	a, b = lo+s, hi+s
	if !finite(a, b) {
		return 0, 0, false
	}
	for i := 0; a-s < lo || a-s > hi; i++ {
		if i == 64 {
			return 0, 0, false
		}
		a = math.Nextafter(a, math.Inf(1))
	}
	for i := 0; b-s > hi || b-s < lo; i++ {
		if i == 64 {
			return 0, 0, false
		}
		b = math.Nextafter(b, math.Inf(-1))
	}
	return a, b, a <= b
}

// rowLit writes v for an expression that a Spider head passes on to its
// shards. Spider prints the statement's literals again with MariaDB's
// my_gcvt, which writes a double such as 3.6e-05 or 0.25 in fixed notation;
// the shard then reads a DECIMAL literal and converts it to double on every
// evaluation (≈ 0.2 µs each: the centred label's 22 occurrences doubled
// the CPU of the inside statement on Spider). my_gcvt keeps the exponent
// form only when |v| < 10⁻¹⁵ (measured with MariaDB 10.11: 9.99e-16 and
// 1e-16 stay, 1.2e-15, 3e-8 and 7.6e-6 are printed in fixed notation) or
// when the integer part has more digits than the shortest form's
// significant digits (|v| ≥ 10¹⁷ is enough), and an integer it prints bare
// is read as an integer literal, converted exactly (shardSafe). Any other v
// is written as the product a·2⁻ᵏ, a = v·2ᵏ, k ≥ 54 (2⁻⁵⁴ < 10⁻¹⁶) with
// |a| ≥ 10¹⁷: both factors keep the exponent form, both products are exact
// (power-of-two scaling, no overflow or underflow for 10⁻¹⁶ ≤ |v| < 10¹⁷),
// so the shard and a single MariaDB evaluate exactly v, as a DOUBLE.
//
// Only for the select list: in a WHERE the head folds a constant product
// into one value and prints that in fixed notation (boxCond).
func rowLit(v float64) string {
	if shardSafe(v) {
		return lit(v)
	}
	k := 54
	for math.Abs(math.Ldexp(v, k)) < 1e17 {
		k++
	}
	return "(" + strconv.FormatFloat(math.Ldexp(v, k), 'e', -1, 64) + " * " + strconv.FormatFloat(math.Ldexp(1, -k), 'e', -1, 64) + ")"
}

// shardSafe reports whether lit(v), re-printed by a Spider head
// (my_gcvt), reaches the shards as a DOUBLE or an exact integer literal
// (rowLit): 0, an integer below 2⁵³, |v| < 10⁻¹⁶ or |v| ≥ 10¹⁷.
func shardSafe(v float64) bool {
	av := math.Abs(v)
	return av == 0 || av < 1e-16 || av >= 1e17 || (v == math.Trunc(v) && av < 1<<53)
}

// boxCond writes the box condition a ≤ col ≤ b (col a DOUBLE column, or
// NULL: the condition is then NULL) for the WHERE of the in-box split, in
// a form whose literals reach Spider's shards as DOUBLEs. The head
// evaluates constant expressions of a WHERE once and prints their value
// again (my_gcvt: fixed notation), so rowLit's products arrive as DECIMAL
// literals there, converted on every row (≈ 0.2 µs each; ≈ +13 % of the
// DP_LSQ default call on 4 shards). When a or b is not shardSafe the
// condition is written on the scaled column:
//
//	fl(col·2⁻ʲ) BETWEEN a·2⁻ʲ AND b·2⁻ʲ,
//
// j ≥ 54 the least with max(|a|, |b|)·2⁻ʲ < 10⁻¹⁶ (so 2⁻ʲ and both ends are
// shardSafe), both ends exact normal doubles with |a·2⁻ʲ|, |b·2⁻ʲ| > 2⁻¹⁰²²
// and nonzero. For every double y this holds exactly when a ≤ y ≤ b:
// rounding is monotone, so a ≤ y gives a·2⁻ʲ ≤ fl(y·2⁻ʲ); if y < a then
// y·2⁻ʲ < a·2⁻ʲ, and fl(y·2⁻ʲ) is y·2⁻ʲ itself when |y·2⁻ʲ| ≥ 2⁻¹⁰²²
// (power-of-two scaling of a double in the normal range is exact) and at
// most 2⁻¹⁰²² < a·2⁻ʲ otherwise (a > 0; for a < 0, |y·2⁻ʲ| > |a·2⁻ʲ| is
// normal); the same for b. A zero end is refused because −0 (a negative y
// that underflows) compares equal to 0. Scaling down cannot overflow (no
// MariaDB error), NULL stays NULL, and the set is the same interval, so
// the split's proofs (convexity for Spider's min-row re-check, every row
// in exactly one part) are unchanged. Otherwise (an end of zero beside an
// unsafe one, or ends too far apart) the rowLit form: correct, slower.
func boxCond(col string, a, b float64) string {
	if shardSafe(a) && shardSafe(b) {
		return col + " BETWEEN " + lit(a) + " AND " + lit(b)
	}
	if c, sa, sb, ok := scaledBox(a, b); ok {
		return "(" + col + " * " + lit(c) + ") BETWEEN " + lit(sa) + " AND " + lit(sb)
	}
	return col + " BETWEEN " + rowLit(a) + " AND " + rowLit(b)
}

// scaledBox returns the factor 2⁻ʲ and the scaled ends of boxCond.
func scaledBox(a, b float64) (c, sa, sb float64, ok bool) {
	m := math.Max(math.Abs(a), math.Abs(b))
	if !finite(a, b) || a == 0 || b == 0 || !(a <= b) {
		return 0, 0, 0, false
	}
	j := 54
	for math.Ldexp(m, -j) >= 1e-16 {
		j++
	}
	if j > 1022 {
		return 0, 0, 0, false
	}
	c, sa, sb = math.Ldexp(1, -j), math.Ldexp(a, -j), math.Ldexp(b, -j)
	const minNormal = 0x1p-1022
	if math.Abs(sa) <= minNormal || math.Abs(sb) <= minNormal || sa/c != a || sb/c != b {
		return 0, 0, 0, false
	}
	return c, sa, sb, true
}
