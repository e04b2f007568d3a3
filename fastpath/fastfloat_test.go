package fastpath

import (
	"math"
	"math/rand"
	"strconv"
	"testing"
)

// TestParseFloatMatchesStrconv: parseFloat gives strconv.ParseFloat's bits
// and errors on random decimals in every notation strconv reads and on
// random strings of the characters a number is made of; the shortcut must
// take most of the plain decimals (else it buys nothing).
func TestParseFloatMatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var inputs []string
	for range 200000 {
		var f float64
		switch r.Intn(4) {
		case 0:
			f = r.Float64()*2000 - 1000
		case 1:
			f = math.Float64frombits(r.Uint64())
		case 2:
			f = float64(r.Int63n(1e6)) / float64(int(1)<<r.Intn(20))
		default:
			f = (r.Float64() - 0.5) * math.Pow(10, float64(r.Intn(60)-30))
		}
		fmtc := []byte{'g', 'e', 'f', 'E', 'G'}[r.Intn(5)]
		prec := r.Intn(25) - 1
		inputs = append(inputs, strconv.FormatFloat(f, fmtc, prec, 64))
	}
	const alphabet = "0123456789.-+eE_xXpinfaINF "
	for range 200000 {
		n := 1 + r.Intn(12)
		b := make([]byte, n)
		for i := range b {
			if r.Intn(3) == 0 {
				b[i] = alphabet[r.Intn(len(alphabet))]
			} else {
				b[i] = byte('0' + r.Intn(10))
			}
		}
		inputs = append(inputs, string(b))
	}
	inputs = append(inputs, "", "-", "+", ".", "-.", "0", "-0", "+0", "-0.0", "0e5", "-0e-5", "5.", ".5", "-.5e1",
		"1e", "1e+", "1e-", "1e22", "1e23", "123456789e15", "1234567890123456789", "12345678901234567890",
		"4503599627370495", "4503599627370496", "9007199254740993", "1e-22", "1e-23", "0.000000000000000000000000001",
		"1e10000", "1e-10000", "1e99999999999999", "00000000000000000000000001.5", "1.5e0000000000000000000003", "0x10", "1_0", "inf", "NaN")
	fast := 0
	plain := 0
	for _, s := range inputs {
		want, werr := strconv.ParseFloat(s, 64)
		got, gerr := parseFloat(s)
		if (werr == nil) != (gerr == nil) || math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("%q: parseFloat %v (%x), %v; strconv %v (%x), %v", s, got, math.Float64bits(got), gerr, want, math.Float64bits(want), werr)
		}
		if f, ok := fastFloat(s); ok {
			fast++
			if math.Float64bits(f) != math.Float64bits(want) || werr != nil {
				t.Fatalf("%q: shortcut %v, strconv %v, %v", s, f, want, werr)
			}
		}
	}
	// The benchmark's values ('g', 10 digits) take the shortcut.
	for range 10000 {
		s := strconv.FormatFloat(r.Float64()*2000-1000, 'g', 10, 64)
		if _, ok := fastFloat(s); ok {
			plain++
		}
	}
	if plain < 9900 {
		t.Fatalf("the shortcut took %d of 10000 plain decimals", plain)
	}
	t.Logf("%d inputs, %d through the shortcut", len(inputs), fast)
}

func BenchmarkParseFloat(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	var in []string
	for range 1024 {
		in = append(in, strconv.FormatFloat(r.Float64()*2000-1000, 'g', 10, 64))
	}
	b.Run("strconv", func(b *testing.B) {
		for i := range b.N {
			strconv.ParseFloat(in[i&1023], 64)
		}
	})
	b.Run("parseFloat", func(b *testing.B) {
		for i := range b.N {
			parseFloat(in[i&1023])
		}
	})
}
