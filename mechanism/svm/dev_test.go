package svm

import (
	"fmt"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

func accuracy(t *testing.T, tr *Trainer, ws [][]float64, d dataset) float64 {
	m := tr.model(ws)
	ok := 0
	for i, x := range d.x {
		p, err := m.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		if p.Class == tr.cfg.Classes[d.y[i]] {
			ok++
		}
	}
	return float64(ok) / float64(len(d.x))
}

func TestDev(t *testing.T) {
	logrus.SetLevel(logrus.InfoLevel)
	bc := loadCSV(t, "breast_cancer.csv")
	dg := loadCSV(t, "digits.csv")
	for _, ds := range []struct{ name string; d dataset; cfg func(dataset, int) Config }{{"bc", bc, breastCancerConfig}, {"digits", dg, digitsConfig}} {
		train, test := split(ds.d)
		for _, kern := range []string{"linear", "rbf"} {
			for _, loss := range []string{"hinge", "logistic", "huber"} {
				for _, C := range []float64{1, 10, 100, 1000} {
					cfg := ds.cfg(train, len(train.x))
					cfg.Kernel, cfg.Loss, cfg.C = kern, loss, C
					tr, err := Plan(cfg)
					if err != nil {
						t.Fatal(err)
					}
					st := time.Now()
					ws, sols, err := tr.fit(train.x, train.y)
					if err != nil {
						t.Fatal(err)
					}
					ep := 0
					for _, s := range sols { ep += s.epochs }
					fmt.Printf("%s %s %s C=%g acc=%.4f train=%.4f epochs=%d tau=%.3g gap=%.3g lambda=%.3g time=%v\n", ds.name, kern, loss, C, accuracy(t, tr, ws, test), accuracy(t, tr, ws, train), ep, tr.tau, sols[0].gap, tr.lambda, time.Since(st))
				}
			}
		}
	}
}

func synth(n, d int, seed uint64) ([][]float64, []int) {
	// xorshift for determinism
	s := seed*2654435761 + 1
	next := func() float64 {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		return float64(s>>11) / (1 << 53)
	}
	X := make([][]float64, n)
	y := make([]int, n)
	for i := range X {
		r := make([]float64, d)
		var q float64
		for j := range r {
			r[j] = 2*next() - 1
			if j < 5 {
				q += r[j] * r[j]
			}
		}
		X[i] = r
		if q+0.3*(next()-0.5) > 5.0/3 {
			y[i] = 1
		}
	}
	return X, y
}

func TestDevSpeed(t *testing.T) {
	logrus.SetLevel(logrus.DebugLevel)
	n := 200000
	X, y := synth(n, 20, 1)
	lo := make([]float64, 20)
	hi := make([]float64, 20)
	names := make([]string, 20)
	for j := range lo {
		lo[j], hi[j] = -1, 1
		names[j] = fmt.Sprint("x", j)
	}
	Xt, yt := synth(20000, 20, 2)
	for _, C := range []float64{1e4, 2e5} {
		cfg := Config{Kernel: "rbf", C: C, Epsilon: 1, N: n, Features: names, Lo: lo, Hi: hi, Classes: []string{"0", "1"}}
		st := time.Now()
		tr, err := Plan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ws, sols, err := tr.fit(X, y)
		if err != nil {
			t.Fatal(err)
		}
		el := time.Since(st)
		acc := accuracy(t, tr, ws, dataset{x: Xt, y: yt})
		fmt.Printf("C=%g time=%v epochs=%d gap=%.3g tau=%.3g acc=%.4f\n", C, el, sols[0].epochs, sols[0].gap, tr.tau, acc)
	}
}
