package linreg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTrainVariants: one release, one model per (ridge, floor) variant;
// the default variant equals Train's rule, larger ridges shrink θ; invalid
// variants are refused before the release.
func TestTrainVariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	beta := synthBeta(rng, 4)
	ds := synthLinear(rng, beta, 3000, 0.1)
	tr, err := Plan(synthConfig(4, 3000, 1, 1e-6))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.TrainVariants(ds.x, ds.y, []Variant{{Ridge: -1, Floor: 1}}); err == nil {
		t.Fatal("negative ridge accepted")
	}
	if _, err := tr.TrainVariants(ds.x, ds.y, []Variant{{Ridge: 1, Floor: 0}}); err == nil {
		t.Fatal("zero floor accepted")
	}
	vs := []Variant{{Ridge: RidgeFactor, Floor: FloorFactor}, {Ridge: 16, Floor: 1}, {Ridge: 1e6, Floor: 1}}
	ms, err := tr.TrainVariants(ds.x, ds.y, vs)
	if err != nil {
		t.Fatal(err)
	}
	norm := func(i int) float64 {
		var s float64
		for _, w := range ms[i].Weights[0] {
			s += w * w
		}
		return math.Sqrt(s)
	}
	if !(norm(0) > norm(1) && norm(1) > norm(2)) || norm(2) > 1e-3*norm(0) {
		t.Fatalf("θ norms %v %v %v: larger ridges must shrink", norm(0), norm(1), norm(2))
	}
	for i, v := range vs {
		if ms[i].Params["ridge_factor"] != v.Ridge || ms[i].Params["floor_factor"] != v.Floor || !(ms[i].Params["lambda"] >= 0) {
			t.Fatalf("variant %d params %v", i, ms[i].Params)
		}
	}
	if tr.ridgeFactor != RidgeFactor || tr.floor != FloorFactor {
		t.Fatal("TrainVariants left the plan's factors changed")
	}
	// The default variant's λ follows Train's rule on the same release:
	// λ = max(0, c·E − λ̃_min) with c = RidgeFactor, so λ(c=16) ≥ λ(c=¼).
	if ms[1].Params["lambda"] < ms[0].Params["lambda"] {
		t.Fatalf("λ(16) = %v < λ(¼) = %v", ms[1].Params["lambda"], ms[0].Params["lambda"])
	}
}

// TestTrainVariantsPrivateBounds: on a private-bounds plan (the default
// for n·ε ≥ 1000, and what tune=1 plans) the variants are trained on the
// privately clipped rows and folded back like Train's model: the radii are
// in the params and the default variant predicts as well as Train does.
func TestTrainVariantsPrivateBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	beta := synthBeta(rng, 4)
	train := synthLinear(rng, beta, 20000, 0.1)
	test := synthLinear(rng, beta, 5000, 0.1)
	tr, err := Plan(privateConfig(4, 20000, 1, 1e-6))
	if err != nil {
		t.Fatal(err)
	}
	if !tr.PrivateBounds() {
		t.Fatal("privateConfig did not plan private bounds")
	}
	var viaVariants, viaTrain []float64
	for run := 0; run < 5; run++ {
		ms, err := tr.TrainVariants(train.x, train.y, []Variant{{Ridge: RidgeFactor, Floor: FloorFactor}})
		if err != nil {
			t.Fatal(err)
		}
		if !(ms[0].Params["clip_feature_norm"] > 0) || !(ms[0].Params["clip_label_radius"] > 0) {
			t.Fatalf("variant params %v lack the released radii", ms[0].Params)
		}
		viaVariants = append(viaVariants, modelRMSE(t, ms[0], test))
		viaTrain = append(viaTrain, trainRMSE(t, tr, train, test))
	}
	if v, w := mean(viaVariants), mean(viaTrain); v > 1.05*w {
		t.Fatalf("TrainVariants RMSE %.4f vs Train %.4f on the same private-bounds plan", v, w)
	}
	// With d ≥ 10 and δ > 0 the plan also releases a preconditioner
	// (§12), which TrainVariants must release and apply as Train does.
	beta = synthBeta(rng, 12)
	train = synthLinear(rng, beta, 20000, 0.1)
	tr, err = Plan(privateConfig(12, 20000, 1, 1e-6))
	if err != nil {
		t.Fatal(err)
	}
	if tr.pre == nil {
		t.Fatal("privateConfig(12, …) did not plan a preconditioner")
	}
	ms, err := tr.TrainVariants(train.x, train.y, []Variant{{Ridge: RidgeFactor, Floor: FloorFactor}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := tr.Train(train.x, train.y)
	if err != nil {
		t.Fatal(err)
	}
	for name, params := range map[string]map[string]float64{"TrainVariants": ms[0].Params, "Train": m.Params} {
		if s := params["precondition_mean_scale"]; !(s > 0) {
			t.Fatalf("%s: the model was not preconditioned (params %v)", name, params)
		}
	}
	// §15: Train refines; the variants (one release, many post-processings)
	// do not, and their AdaSSP stage has the refinement's share instead.
	if tr.ref == nil || m.Params["refine_steps"] != RefineSteps {
		t.Fatalf("Train did not refine (params %v)", m.Params)
	}
	if _, ok := ms[0].Params["refine_steps"]; ok {
		t.Fatalf("TrainVariants' model records refinement steps (params %v)", ms[0].Params)
	}
	if r := ms[0].Params["gaussian_ratio"]; !near(r, tr.ref.stage, 1e-15) || !(ms[0].Params["sigma_xx"] < m.Params["sigma_xx"]) {
		t.Fatalf("TrainVariants' AdaSSP ratio %v, want the whole stage %v (σ_A %v vs Train's %v)", r, tr.ref.stage, ms[0].Params["sigma_xx"], m.Params["sigma_xx"])
	}
}
