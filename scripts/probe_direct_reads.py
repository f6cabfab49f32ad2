#!/usr/bin/env python3
"""O_DIRECT read rates of a directory's drive by file size and by reads in flight.

docs/performance.md ("Session spill") quotes it: --total-mib of random bytes written as 1, 4,
16 and 64 files (one O_DIRECT write and fsync each), then read back one O_DIRECT read per file,
one file at a time; then the 16 files read 1, 2 and 4 at a time. Three rounds.

    scripts/probe_direct_reads.py DIR [--total-mib 45]
"""
import argparse
import mmap
import os
import shutil
import threading
import time


def write_files(d, n, total):
    size = total // n // 4096 * 4096
    buf = mmap.mmap(-1, size)
    paths = []
    for i in range(n):
        buf.seek(0)
        buf.write(os.urandom(size))
        p = os.path.join(d, f"{n}_{i}")
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o600)
        os.pwritev(fd, [buf], 0)
        os.fsync(fd)
        os.close(fd)
        paths.append(p)
    return paths, size


def read_all(paths, size, depth):
    bufs = [mmap.mmap(-1, size) for _ in range(depth)]
    nxt, lock = [0], threading.Lock()

    def worker(k):
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= len(paths):
                return
            fd = os.open(paths[i], os.O_RDONLY | os.O_DIRECT)
            os.preadv(fd, [bufs[k]], 0)
            os.close(fd)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(depth)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(paths) * size / (time.perf_counter() - t0) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--total-mib", type=int, default=45)
    a = ap.parse_args()
    d = os.path.join(a.dir, "probe_direct_reads")
    os.makedirs(d, mode=0o700, exist_ok=True)
    try:
        sets = {n: write_files(d, n, a.total_mib << 20) for n in (1, 4, 16, 64)}
        for _ in range(3):
            by_size = {f"{n} x {s / 1e6:.1f} MB": round(read_all(p, s, 1), 2)
                       for n, (p, s) in sets.items()}
            p16, s16 = sets[16]
            by_depth = {f"{k} at a time": round(read_all(p16, s16, k), 2) for k in (1, 2, 4)}
            print({"gb_per_s_by_size": by_size, "gb_per_s_16_files_by_depth": by_depth})
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
