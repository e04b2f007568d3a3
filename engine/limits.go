package engine

import (
	"bufio"
	"os"
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
	total := memTotal()
	if lim := cgroupLimit(); lim > 0 && (total == 0 || lim < total) {
		total = lim
	}
	if total <= 0 {
		return 4 << 30
	}
	return int64(float64(total) * ReleaseMemoryFraction)
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
