"""Compares go test -json outputs of the store and memory harnesses.

Counts leaf tests (subtests without subtests). A test counts for the store
when it passes on the memory harness and on the store. Prints per-suite
counts and, with -v, every test that passes on memory but not on the store
with the first error message."""
import collections, glob, json, os, re, sys

def load(path, prefix):
    status, out = {}, collections.defaultdict(list)
    if not os.path.exists(path):
        return status, out
    for line in open(path, errors="replace"):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        t = e.get("Test")
        if not t or not t.startswith(prefix + "/"):
            continue
        k = t[len(prefix) + 1:]
        if e.get("Action") == "output":
            out[k].append(e["Output"])
        elif e.get("Action") in ("pass", "fail", "skip"):
            status[k] = e["Action"]
    return status, out

def leaves(status):
    ks = sorted(status)
    return {k for i, k in enumerate(ks) if not (i + 1 < len(ks) and ks[i + 1].startswith(k + "/"))}

def reason(k, out):
    parts = k.split("/")
    for i in range(len(parts), 0, -1):
        txt = "".join(out.get("/".join(parts[:i]), []))
        m = re.findall(r"Messages:\s*(.*)", txt) or re.findall(r"Error:\s*(.*)\n\s+(.*)", txt)
        if m:
            r = m[-1] if isinstance(m[-1], str) else " ".join(m[-1])
            return re.sub(r"\s+", " ", r)[:220]
        if "panic" in txt:
            return "panic: " + re.sub(r"\s+", " ", txt[txt.index("panic"):])[:200]
    return "(no message)"

d = sys.argv[1]
verbose = "-v" in sys.argv
tot_m = tot_b = tot_s = 0
rows, missing = [], []
for f in sorted(glob.glob(os.path.join(d, "Memory-*.json"))):
    suite = os.path.basename(f)[len("Memory-"):-len(".json")]
    m, _ = load(f, "TestMemory/" + suite)
    s, so = load(os.path.join(d, "Store-" + suite + ".json"), "TestStore/" + suite)
    mp = {k for k in leaves(m) if m[k] == "pass"}
    sp = {k for k in leaves(s) if s[k] == "pass"}
    both = mp & sp
    tot_m += len(mp); tot_b += len(both); tot_s += len(sp)
    rows.append((suite, len(mp), len(both), len(sp)))
    missing += [(suite, k, reason(k, so), s.get(k, "absent")) for k in sorted(mp - sp)]
print("%-42s %8s %8s %8s" % ("suite", "memory", "both", "store"))
for r in rows:
    print("%-42s %8d %8d %8d" % r)
print("%-42s %8d %8d %8d  (%.1f%% of the memory passes)" % ("TOTAL", tot_m, tot_b, tot_s, 100.0 * tot_b / max(tot_m, 1)))
if verbose:
    for suite, k, r, st in missing:
        print("%s\t%s\t%s" % (k, st, r))
