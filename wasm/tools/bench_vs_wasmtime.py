"""A first look: the same supertok.wasm encoding o200k_base in Node.js (wasm/supertok.mjs)
and on wasmtime through the Python package, side by side in one run, interleaved rounds.

Each round starts a fresh node process (bench-encode.mjs: load o200k_base, 3 warm-up encodes,
then REPS timed encodeOrdinary calls per file) and then times REPS encode_ordinary calls per file
on wasmtime in this process (loaded once, warmed up the same way). Reported: MB/s from CPU time
(process CPU time: Node's process.cpuUsage, Python's time.process_time; both count every thread)
and from wall time, the median over all calls with min-max, the ratio Node/wasmtime per round
(CPU), and the load time of o200k_base in a fresh node process.

    xz -dc en.txt.xz | head -c 1048576 > en.txt   # likewise zh.txt
    SUPERTOK_BACKEND=wasmtime python wasm/tools/bench_vs_wasmtime.py --rounds 5 --reps 5 en.txt zh.txt

(the Python package must import, with wasmtime installed: e.g. PYTHONPATH=py.)"""
import argparse
import json
import os
import statistics
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def summary(xs):
    return "%.1f (%.1f-%.1f)" % (statistics.median(xs), min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    import supertok
    assert supertok.backend() == "wasmtime", "run with SUPERTOK_BACKEND=wasmtime (got %s)" % supertok.backend()
    t, c = time.perf_counter(), time.process_time()
    enc = supertok.get_encoding("o200k_base")
    py_load, py_load_cpu = time.perf_counter() - t, time.process_time() - c
    texts, tmp = {}, tempfile.mkdtemp(prefix="supertok-bench-")
    node_files = []
    for f in a.files:
        with open(f, "rb") as fh:  # a file cut at a byte count: a character cut in two is dropped
            texts[f] = fh.read().decode("utf-8", "ignore")
        node_files.append(os.path.join(tmp, "%d.txt" % len(node_files)))
        with open(node_files[-1], "w", encoding="utf-8") as fh:  # node reads exactly this text
            fh.write(texts[f])
        for _ in range(3):
            enc.encode_ordinary(texts[f])
    res = {f: {"node_cpu": [], "node_wall": [], "wt_cpu": [], "wt_wall": [], "ratio": []} for f in a.files}
    loads, loads_cpu = [], []
    for r in range(a.rounds):
        out = subprocess.run(["node", os.path.join(HERE, "bench-encode.mjs"), str(a.reps)] + node_files,
                             capture_output=True, text=True, check=True).stdout
        node = json.loads(out)
        node["files"] = dict(zip(a.files, (node["files"][f] for f in node_files)))
        loads.append(node["load"]["wall_s"] * 1000)
        loads_cpu.append(node["load"]["cpu_s"] * 1000)
        for f in a.files:
            nb = node["files"][f]["bytes"]
            mb = nb / 1e6
            x = res[f]
            x["node_cpu"] += [mb / s for s in node["files"][f]["cpu_s"]]
            x["node_wall"] += [mb / s for s in node["files"][f]["wall_s"]]
            cpus = []
            for _ in range(a.reps):
                c, w = time.process_time(), time.perf_counter()
                ids = enc.encode_ordinary(texts[f])
                cpus.append(time.process_time() - c)
                x["wt_wall"].append(mb / (time.perf_counter() - w))
            assert len(ids) == node["files"][f]["ids"], "node and wasmtime disagree on %s" % f
            x["wt_cpu"] += [mb / s for s in cpus]
            x["ratio"].append(statistics.median(node["files"][f]["cpu_s"]) and
                              statistics.median(cpus) / statistics.median(node["files"][f]["cpu_s"]))
    shutil.rmtree(tmp)
    print("o200k_base load, ms CPU / wall: node (fresh process: module compile + rank file + sha256) %s / %s; "
          "wasmtime in Python (once) %.0f / %.0f" % (summary(loads_cpu), summary(loads), py_load_cpu * 1000, py_load * 1000))
    print("| file | MB | node MB/s (CPU) | wasmtime MB/s (CPU) | node MB/s (wall) | wasmtime MB/s (wall) | node / wasmtime (CPU, per round) |")
    print("|---|---|---|---|---|---|---|")
    for f in a.files:
        x = res[f]
        print("| %s | %.2f | %s | %s | %s | %s | %.2f (%.2f-%.2f) |" % (
            os.path.basename(f), len(texts[f].encode()) / 1e6, summary(x["node_cpu"]), summary(x["wt_cpu"]),
            summary(x["node_wall"]), summary(x["wt_wall"]), statistics.median(x["ratio"]), min(x["ratio"]),
            max(x["ratio"])))


if __name__ == "__main__":
    main()
