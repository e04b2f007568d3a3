package server

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// ReleaseMemoryFraction is the share of the machine's memory (or of the
// cgroup's limit, if lower) that releases may use by default.
const ReleaseMemoryFraction = 0.5

// DefaultMaxReleaseMemory is the default of --max-release-memory: half of
// the physical memory, or of the cgroup v2 memory limit when that is lower.
// If neither can be read it is 4 GiB.
func DefaultMaxReleaseMemory() int64 {
	total := machineMemory()
	if total <= 0 {
		return 4 << 30
	}
	return int64(float64(total) * ReleaseMemoryFraction)
}

// machineMemory is the physical memory, or the cgroup v2 memory limit when
// that is lower; 0 if neither can be read.
func machineMemory() int64 {
	total := memTotal()
	if lim := cgroupLimit(); lim > 0 && (total == 0 || lim < total) {
		total = lim
	}
	return max(total, 0)
}

// Go runtime settings (TuneRuntime). GCPercent: with the default 100 the
// collector ran every few MB of allocation on the OLTP paths, whose live
// heap is small (oltp_insert at 8 threads: ≈ 15 % more transactions per
// CPU second at 200, docs/results/storage.md); SoftMemoryFraction: the
// runtime's soft memory limit, so that a larger GC target cannot push a
// release that uses its whole --max-release-memory (half the memory) past
// the machine's memory — the collector works harder near the limit
// instead (without a limit, GOGC=100 alone let such a heap reach 2×).
const (
	GCPercent          = 200
	SoftMemoryFraction = 0.8
)

// TuneRuntime sets the collector's target to GCPercent unless GOGC is set,
// and a soft memory limit of SoftMemoryFraction of machineMemory unless
// GOMEMLIMIT is set (or the memory cannot be read). It returns the settings
// in force (limit math.MaxInt64: none).
func TuneRuntime() (gcPercent int, memLimit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	if total := machineMemory(); os.Getenv("GOMEMLIMIT") == "" && total > 0 {
		debug.SetMemoryLimit(int64(float64(total) * SoftMemoryFraction))
	}
	gcPercent = debug.SetGCPercent(-1)
	debug.SetGCPercent(gcPercent)
	return gcPercent, debug.SetMemoryLimit(-1)
}

func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

func cgroupLimit() int64 {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0 // "max": no limit
	}
	return v
}

// ParseBytes reads a size such as 4GiB, 512MiB, 2G, 1.5T or 1073741824
// (binary units: K, M, G, T with or without "iB"/"B").
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	up := strings.ToUpper(t)
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
		{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"TB", 1 << 40},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(up, u.suffix) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.m
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || f*mult > 1<<62 {
		return 0, &strconv.NumError{Func: "ParseBytes", Num: s, Err: strconv.ErrSyntax}
	}
	return int64(f * mult), nil
}
