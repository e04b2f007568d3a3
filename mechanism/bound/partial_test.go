package bound

import (
	"math"
	"testing"
)

// TestPartialEqualsRows: feeding a person's rows of a group as partial
// aggregates (any batching, as a backend's GROUP BY person, raw value
// returns them) gives the same bounded statistics as feeding the rows
// (docs/privacy/units.md §11). k is the number of groups so the group
// draw keeps everything and the comparison is exact.
func TestPartialEqualsRows(t *testing.T) {
	nan := math.NaN()
	p := mustPlan(t, Spec{MaxGroups: 3, MaxRows: 2, Epsilon: 1, Domain: []string{"a", "b", "c"},
		Measures: []Measure{{Kind: Count}, {Kind: Count}, {Kind: Sum, Lo: -5, Hi: 30}, {Kind: Avg, Lo: 0, Hi: 10}}})
	rows := []row{
		{"p1", "a", []float64{1, 1, 4, 4}}, {"p1", "a", []float64{1, nan, 9, 9}}, {"p1", "a", []float64{1, 1, 20, 20}},
		{"p1", "b", []float64{1, nan, nan, nan}},
		{"p2", "a", []float64{1, 1, -3, 12}}, {"p2", "c", []float64{1, 1, 2, 2}}, {"p2", "c", []float64{1, 1, 7, 3}},
		{"p3", "z", []float64{1, 1, 1, 1}}, // outside the domain
	}
	want := bounded(t, p, rows)
	for _, batch := range []int{1, 2, 3} {
		a := p.Accumulator()
		// Batch consecutive rows of the same (person, group).
		for i := 0; i < len(rows); {
			j := i
			all := int64(0)
			n := make([]int64, 4)
			s := make([]float64, 4)
			for ; j < len(rows) && j-i < batch && rows[j].person == rows[i].person && rows[j].group == rows[i].group; j++ {
				all++
				for m, v := range rows[j].vals {
					if !math.IsNaN(v) {
						n[m]++
						s[m] += v
					}
				}
			}
			a.Partial(rows[i].person, rows[i].group, all, n, s)
			i = j
		}
		got, err := a.Bound()
		if err != nil {
			t.Fatal(err)
		}
		for m := range want.First {
			for g := range want.Keys {
				if math.Abs(got.First[m][g]-want.First[m][g]) > 1e-12 || math.Abs(got.Second[m][g]-want.Second[m][g]) > 1e-12 {
					t.Fatalf("batch %d, measure %d, group %s: partial %v/%v, rows %v/%v", batch, m, want.Keys[g],
						got.First[m][g], got.Second[m][g], want.First[m][g], want.Second[m][g])
				}
			}
		}
		if got.Persons[0] != want.Persons[0] || got.Persons[2] != want.Persons[2] {
			t.Fatalf("batch %d: persons %v, want %v", batch, got.Persons, want.Persons)
		}
	}
	// The cap and the clamp see the total: 3 rows of p1 in a count as
	// min(3, C = 2); p1's sum 33 in a clamps to 30.
	if want.First[0][0] != 2+1 || want.First[2][0] != 30+(-3) {
		t.Fatalf("bounded a: count %v sum %v", want.First[0][0], want.First[2][0])
	}
}
