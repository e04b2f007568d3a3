package main

import (
	"flag"
	"fmt"
	"log"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpsql/dpsql/audit"
	"github.com/dpsql/dpsql/noise"
)

func main() {
	factor := flag.Float64("factor", 0.5, "noise scale as a fraction of the correct Δ/ε")
	eps := flag.Float64("eps", 1, "claimed ε (Δ = 1, correct scale 1/ε)")
	ns := flag.String("n", "500,1000,2000,4000", "comma-separated N per side")
	reps := flag.Int("reps", 20, "audits per N")
	alpha := flag.Float64("alpha", 1e-6, "significance level")
	flag.Parse()

	scale := *factor / *eps
	sampler := func(neighbour int) float64 {
		v, err := noise.AddLaplace(float64(neighbour), scale)
		if err != nil {
			log.Fatal(err)
		}
		return v
	}
	fmt.Printf("Laplace, ε claimed %.3g, true ε %.3g (scale × %.3g), α = %.0e, %d audits per N\n",
		*eps, *eps / *factor, *factor, *alpha, *reps)
	fmt.Println("N per side | caught | median ε_lower | time per audit")
	for _, f := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			log.Fatal(err)
		}
		caught := 0
		lows := make([]float64, 0, *reps)
		start := time.Now()
		for r := 0; r < *reps; r++ {
			res := audit.Run(sampler, audit.Config{N: n, Alpha: *alpha})
			if !res.Passes(*eps) {
				caught++
			}
			lows = append(lows, res.EpsLower)
		}
		per := time.Since(start) / time.Duration(*reps)
		fmt.Printf("%d | %d/%d | %.3f | %v\n", n, caught, *reps, median(lows), per.Round(time.Millisecond))
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
