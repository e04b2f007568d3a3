package store

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dpsql/dpsql/wal"
	bolt "go.etcd.io/bbolt"
)

// BenchmarkCommitDurability compares, on the machine's file system, the
// durable commit of one single-row insert as the store lays it out in bbolt
// (a row, a secondary index entry and the table's stat under nested
// buckets, next to 10 000 rows) with the same commit without bbolt's two
// fdatasyncs, and with one write of a log record to a preallocated file plus
// one fdatasync (what a write-ahead log in front of bbolt would pay per
// group commit), and (wal) that write-ahead log itself: bbolt without
// fsync behind one log record and fdatasync per commit. cpu-ns/op is the process's CPU time per commit (fdatasync
// costs CPU in the guest kernel here); pages/op the pages bbolt writes.
//
//	go test ./store/ -run '^$' -bench CommitDurability -benchtime 1000x
func BenchmarkCommitDurability(b *testing.B) {
	for _, mode := range []string{"bbolt", "bbolt-nosync", "log-fdatasync", "wal"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			if mode == "log-fdatasync" {
				benchLogAppend(b, filepath.Join(dir, "log"))
				return
			}
			open, closeDB := bolt.Open, (*bolt.DB).Close
			if mode == "wal" { // the write-ahead log (package wal) as the store uses it
				open = func(p string, _ os.FileMode, o *bolt.Options) (*bolt.DB, error) { return wal.Open(p, o) }
				closeDB = wal.Close
			}
			db, err := open(filepath.Join(dir, "b.db"), 0o600, &bolt.Options{InitialMmapSize: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			defer closeDB(db)
			val := make([]byte, 200)
			path := [][]byte{[]byte("data"), []byte("db"), []byte("\x00tables"), {0, 0, 0, 0, 0, 0, 0, 1}}
			table := func(tx *bolt.Tx) *bolt.Bucket {
				bk := tx.Bucket(path[0])
				for _, p := range path[1:] {
					bk = bk.Bucket(p)
				}
				return bk
			}
			err = wal.Update(db, func(tx *bolt.Tx) error {
				bk, err := tx.CreateBucketIfNotExists(path[0])
				for _, p := range path[1:] {
					if err != nil {
						return err
					}
					bk, err = bk.CreateBucketIfNotExists(p)
				}
				if err != nil {
					return err
				}
				rows, err := bk.CreateBucket([]byte("rows"))
				if err != nil {
					return err
				}
				idx, err := bk.CreateBucket([]byte("i1"))
				if err != nil {
					return err
				}
				for i := range 10000 {
					k := binary.BigEndian.AppendUint64(nil, uint64(i))
					if err := rows.Put(k, val); err != nil {
						return err
					}
					if err := idx.Put(append(binary.BigEndian.AppendUint64(nil, uint64(i*7919%10000)), k...), nil); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			if mode != "wal" {
				db.NoSync = mode == "bbolt-nosync"
			}
			w0 := db.Stats().TxStats
			cpu0 := benchCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				err := wal.Logged(db, func(tx *bolt.Tx, rec *wal.Rec) error {
					bk := table(tx)
					k := binary.BigEndian.AppendUint64(nil, uint64(10000+i))
					if err := bk.Put(keyStat, k); err != nil {
						return err
					}
					rec.Put(path, keyStat, k)
					if err := bk.Bucket([]byte("rows")).Put(k, val); err != nil {
						return err
					}
					rec.Put(append(path, []byte("rows")), k, val)
					ik := append(binary.BigEndian.AppendUint64(nil, uint64(i*7919%10000)), k...)
					rec.Put(append(path, []byte("i1")), ik, nil)
					return bk.Bucket([]byte("i1")).Put(ik, nil)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((benchCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			w1 := db.Stats().TxStats
			b.ReportMetric(float64(w1.GetWrite()-w0.GetWrite())/float64(b.N), "pages/op")
		})
	}
}

// benchLogAppend writes 400-byte records one after the other into a
// zero-filled (so no block allocation) file, each followed by fdatasync.
func benchLogAppend(b *testing.B, path string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	const size = 64 << 20
	zero := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(zero)) {
		if _, err := f.WriteAt(zero, off); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	rec := make([]byte, 400)
	cpu0 := benchCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.WriteAt(rec, int64(i)*int64(len(rec))%size); err != nil {
			b.Fatal(err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((benchCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
