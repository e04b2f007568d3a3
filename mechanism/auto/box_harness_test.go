package auto_test

// The measurement harness behind the private box (docs/mechanisms/box.md):
// lda and logreg with the declared box (public) against the private box on
// synthetic problems whose declared boxes are tight, loose (data in a
// corner at 1–10 % of the box), heavy-tailed (log-normal features with a
// domain bound) or mixed, and on shared/ TRAINING splits (4-fold CV inside
// gauss's public-seed 80 % split). A benchmark, not a test: it runs only
// with BOX_HARNESS=1.
//
//	BOX_HARNESS=1 nice -n 10 go test -run TestBoxHarness -v -timeout 3h ./mechanism/auto/
//
// Environment as TestAutoHarness (AUTO_CANDS, AUTO_EPS, AUTO_DELTA, AUTO_N,
// AUTO_D, AUTO_K, AUTO_RUNS, AUTO_OUT, AUTO_SHARED) plus BOX_MODES
// ("tight,loose,heavy,mixed"), BOX_SETS ("synthetic,shared"). A candidate
// with /box=1 trains on the private box (box.Share, box.DefaultTail; /bs=… sets
// the share, /tmax=… and /tmin=… clamp the tail rule tn·(2/ε_q)·ln K/n, /tn=… its factor (default: tmin = tmax = box.DefaultTail), /gm=… the penalty per octave in noise scales, /po=… its cap in octaves).
// Rows: set,mode,n,d,K,eps,delta,candidate,run,accuracy.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/dpsql/dpsql/mechanism"
	"github.com/dpsql/dpsql/mechanism/box"
)

// distort maps a factor-model data set (declared ±B) to one of the box
// regimes; params come from seed, so train and test get the same map.
func distort(ds *dataset, mode string, seed uint64) *dataset {
	if mode == "tight" {
		return ds
	}
	d := len(ds.features)
	rng := rand.New(rand.NewPCG(seed, 0xb0c5))
	kind := make([]string, d)
	frac := make([]float64, d)
	sig := make([]float64, d)
	for j := range kind {
		switch mode {
		case "mixed":
			kind[j] = []string{"tight", "loose", "heavy"}[j%3]
		default:
			kind[j] = mode
		}
		frac[j] = math.Exp(math.Log(0.01) + rng.Float64()*(math.Log(0.1)-math.Log(0.01)))
		sig[j] = math.Exp(math.Log(0.5) + rng.Float64()*(math.Log(1.5)-math.Log(0.5)))
	}
	out := &dataset{name: ds.name, features: ds.features, classes: ds.classes, y: ds.y,
		lo: append([]float64(nil), ds.lo...), hi: append([]float64(nil), ds.hi...)}
	for j := range kind {
		switch kind[j] {
		case "loose": // data in a corner at frac of the declared width
			out.hi[j] = ds.lo[j] + (ds.hi[j]-ds.lo[j])/frac[j]
		case "heavy": // log-normal, sd sig in log space, domain [0, 1000]
			out.lo[j], out.hi[j] = 0, 1000
		}
	}
	out.x = make([][]float64, len(ds.x))
	for i, r := range ds.x {
		row := append([]float64(nil), r...)
		for j := range row {
			if kind[j] == "heavy" {
				sd := ds.hi[j] / 4
				row[j] = math.Min(1000, math.Exp(sig[j]*row[j]/sd))
			}
		}
		out.x[i] = row
	}
	return out
}

// trainBoxed runs the private box then the candidate on the released box
// at the kind's share of the budget, as DP_TRAIN does (functions/train_kinds.go).
func trainBoxed(c candidate, tr *dataset, eps, delta float64) (*mechanism.Model, error) {
	share := box.Share
	if v, ok := c.opt["bs"]; ok {
		share = v
	}
	per := box.Quantiles
	if v, ok := c.opt["gm"]; ok && v == 0 {
		per = 2 // no median
	}
	sp, err := box.NewSplitShare(eps, delta, len(tr.features), share, per)
	if err != nil {
		return nil, err
	}
	// The tail rule measured against the fixed default: t = tn·b·ln K/n
	// clamped to [tmin, tmax] (/tmax=0.01 is the default t = 0.01).
	tmin, tmax, tn := box.DefaultTail, box.DefaultTail, 1.0
	if v, ok := c.opt["tmin"]; ok {
		tmin = v
	}
	if v, ok := c.opt["tmax"]; ok {
		tmax = v
	}
	if v, ok := c.opt["tn"]; ok {
		tn = v
	}
	k := 0
	for j := range tr.lo {
		k = max(k, len(box.Grid(tr.lo[j], tr.hi[j])))
	}
	tail := math.Min(tmax, math.Max(tmin, tn*(2/sp.EpsQ)*math.Log(float64(k))/float64(len(tr.x))))
	bp, err := box.New(len(tr.x), tr.lo, tr.hi, sp.EpsQ, tail)
	if err != nil {
		return nil, err
	}
	if v, ok := c.opt["gm"]; ok {
		bp = bp.WithPenalty(v)
	}
	if v, ok := c.opt["po"]; ok {
		bp = bp.WithPenaltyCap(v)
	}
	b, err := bp.Release(tr.x)
	if err != nil {
		return nil, err
	}
	in := &dataset{name: tr.name, features: tr.features, classes: tr.classes, x: tr.x, y: tr.y, lo: b.Lo, hi: b.Hi}
	if c.opt["declared"] == 1 { // the budget split without using the box (diagnostic)
		in.lo, in.hi = tr.lo, tr.hi
	}
	inner := candidate{name: c.name, kind: c.kind, opt: map[string]float64{}}
	for k, v := range c.opt {
		switch k {
		case "box", "bs", "tmin", "tmax", "tn", "gm", "po", "declared":
		default:
			inner.opt[k] = v
		}
	}
	return inner.train(in, sp.KindEps, delta)
}

func TestBoxHarness(t *testing.T) {
	if os.Getenv("BOX_HARNESS") != "1" {
		t.Skip("benchmark harness: set BOX_HARNESS=1 (docs/mechanisms/box.md)")
	}
	var cands []candidate
	for _, s := range envList("AUTO_CANDS", "lda,lda/box=1,logreg,logreg/box=1") {
		cands = append(cands, parseCandidate(t, s))
	}
	eps := envFloats(t, "AUTO_EPS", "1")
	deltas := envFloats(t, "AUTO_DELTA", "1e-6")
	runs, _ := strconv.Atoi(os.Getenv("AUTO_RUNS"))
	if runs <= 0 {
		runs = 2
	}
	out := &harnessOut{}
	if p := os.Getenv("AUTO_OUT"); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out.f = f
	}
	sets := map[string]bool{}
	for _, s := range envList("BOX_SETS", "synthetic,shared") {
		sets[s] = true
	}
	eval := func(set, mode string, n, d, k int, tr, te *dataset) {
		out.row(t, set, mode, n, d, k, 0, 0, "np_lda", 0, fitLDA(tr).accuracy(te))
		out.row(t, set, mode, n, d, k, 0, 0, "majority", 0, majority(tr, te))
		for _, e := range eps {
			for _, dl := range deltas {
				for _, c := range cands {
					for r := 0; r < runs; r++ {
						var m *mechanism.Model
						var err error
						if c.opt["box"] == 1 {
							m, err = trainBoxed(c, tr, e, dl)
						} else {
							m, err = c.train(tr, e, dl)
						}
						if err != nil {
							t.Logf("%s %s %s ε=%v δ=%v: %v", set, mode, c.name, e, dl, err)
							break
						}
						out.row(t, set, mode, n, d, k, e, dl, c.name, r, accuracy(t, m, te))
					}
				}
			}
		}
	}
	if sets["synthetic"] {
		modes := envList("BOX_MODES", "tight,loose,heavy,mixed")
		ns := envFloats(t, "AUTO_N", "1000,10000")
		ds := envFloats(t, "AUTO_D", "10,40")
		ks := envFloats(t, "AUTO_K", "2,5")
		for _, df := range ds {
			for _, kf := range ks {
				d, k := int(df), int(kf)
				seed := uint64(1 + 100*d + 10000*k)
				sep := calibrateSep(d, k, seed, 0.9)
				g := newSynth(synthSpec{d: d, k: k, sep: sep, noise: 0.05, seed: seed})
				te0 := g.draw(10000, seed+7, true)
				for _, nf := range ns {
					n := int(nf)
					tr0 := g.draw(n, seed+uint64(n), true)
					for _, mode := range modes {
						eval(fmt.Sprintf("syn_d%d_K%d", d, k), mode, n, d, k, distort(tr0, mode, seed+3), distort(te0, mode, seed+3))
					}
				}
			}
		}
	}
	if sets["shared"] {
		for _, name := range envList("AUTO_SHARED", "breast_cancer,digits,vehicle,vowel") {
			full := loadDataset(t, name)
			trIdx, _ := splitIdx(len(full.x), 12345, 0.8) // the 20 % test part is never used
			train := full.subset(trIdx)
			const folds = 4
			perm, _ := splitIdx(len(train.x), 777, 1)
			for f := 0; f < folds; f++ {
				var a, b []int
				for i, p := range perm {
					if i%folds == f {
						b = append(b, p)
					} else {
						a = append(a, p)
					}
				}
				tr, te := train.subset(a), train.subset(b)
				eval(name+"_cv"+strconv.Itoa(f), "owner", len(tr.x), len(tr.features), len(tr.classes), tr, te)
			}
		}
	}
}
