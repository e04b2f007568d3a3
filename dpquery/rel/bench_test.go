package rel

import (
	"testing"

	"github.com/dpsql/dpsql/functions"
	"github.com/dpsql/dpsql/mechanism/bound"
)

// benchShop: 10⁵ customers in 2 regions, 10⁶ orders (10 each).
func benchShop(b *testing.B) *mem {
	m := shop(b, 0, 0)
	for c := 0; c < 100_000; c++ {
		addCustomer(m, int64(c), []string{"north", "south"}[c%2], 10, float64(c%100))
	}
	return m
}

// BenchmarkUnitJoin is the grouped DP join (orders ⨝ customers GROUP BY
// region, COUNT and SUM, C = 10) through the compiler, against
// BenchmarkPlainJoin, the same join and grouping without privacy on the
// same in-memory source (docs/results/units.md).
func BenchmarkUnitJoin(b *testing.B) {
	m := benchShop(b)
	q := ordersByRegion
	q.Aggs = q.Aggs[:2]
	q.Options = Options{Epsilon: 1, MaxRows: 10}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := Compile(q, m)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Run(m, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlainJoin(b *testing.B) {
	m := benchShop(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		region := map[string]string{}
		if _, err := m.ScanValues("s", "customers", []string{"id", "region"}, func(r []any) error {
			region[functions.LabelString(r[0])] = r[1].(string)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		count, sum := map[string]int64{}, map[string]float64{}
		if _, err := m.ScanValues("s", "orders", []string{"customer_id", "amount"}, func(r []any) error {
			g, ok := region[functions.LabelString(r[0])]
			if ok {
				count[g]++
				f, _ := functions.ToFloat(r[1])
				sum[g] += f
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if len(count) != 2 {
			b.Fatal(count)
		}
	}
	_ = bound.Count
}
