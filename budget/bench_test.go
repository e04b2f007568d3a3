package budget

import (
	"runtime"
	"testing"
)

// Reserve throughput on a real bbolt file with fsync on. Each Reserve is
// durable when it returns; concurrent callers share fsyncs (group commit).

func benchReserve(b *testing.B, mode Mode, clients int, complete bool) {
	a, _, _ := openTemp(b)
	mustProtect(b, a, "db.t", MaxEpsilon, 0.5, mode)
	r := req("db.t", 1e-6)
	one := func() {
		rec, err := a.Reserve(r)
		if err != nil {
			b.Fatal(err)
		}
		if complete {
			if err := a.Complete(rec.ID, StatusOK, ""); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	if clients <= 1 {
		for i := 0; i < b.N; i++ {
			one()
		}
	} else {
		b.SetParallelism((clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				one()
			}
		})
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "releases/s")
}

func BenchmarkReserveSequential(b *testing.B)           { benchReserve(b, Basic, 1, false) }
func BenchmarkReserveConcurrent64(b *testing.B)         { benchReserve(b, Basic, 64, false) }
func BenchmarkReserveCompleteSequential(b *testing.B)   { benchReserve(b, Basic, 1, true) }
func BenchmarkReserveCompleteConcurrent64(b *testing.B) { benchReserve(b, Basic, 64, true) }
func BenchmarkReserveRDPSequential(b *testing.B)        { benchReserve(b, RDP, 1, false) }
func BenchmarkReserveRDPConcurrent64(b *testing.B)      { benchReserve(b, RDP, 64, false) }
