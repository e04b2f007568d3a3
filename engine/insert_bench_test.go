package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpsql/dpsql/engine"
	"github.com/dpsql/dpsql/server"
)

// BenchmarkSysbenchInsert: one connection sending sysbench oltp_insert's
// statement (text protocol, AUTO_INCREMENT id, secondary index k_1) to a
// table of 10 000 rows. cpu-ns/op is the CPU time of the process (server
// and go-sql-driver client) per INSERT, comparable on a loaded machine;
// nosync=true leaves out bbolt's fsyncs to separate their cost.
func BenchmarkSysbenchInsert(b *testing.B) {
	for _, nosync := range []bool{false, true} {
		b.Run(fmt.Sprintf("nosync=%v", nosync), func(b *testing.B) {
			ts := startServerOpts(b, b.TempDir(), engine.Options{}, server.Options{})
			mustExec(b, ts.connect("root", rootPW, ""), "CREATE DATABASE sb")
			db := ts.connect("root", rootPW, "sb")
			db.SetMaxOpenConns(1)
			mustExec(b, db, "CREATE TABLE sbtest1 (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id), KEY k_1 (k))")
			var sb strings.Builder
			for i := 1; i <= 10000; i++ {
				if sb.Len() > 0 {
					sb.WriteString(",")
				}
				fmt.Fprintf(&sb, "(%d, '%0119d-', '%059d-')", i*7%10000, i, i)
			}
			mustExec(b, db, "INSERT INTO sbtest1 (k, c, pad) VALUES "+sb.String())
			ts.e.DB.NoSync = nosync
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := fmt.Sprintf("INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, %d, '%0119d-', '%059d-')", i%10000, i, i)
				if _, err := db.Exec(q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
