#!/usr/bin/env python3
"""What the first write into fresh anonymous memory costs, by how it was prepared.

docs/performance.md ("Overheads around the engine") and src/cache/section_pool.cc quote it:
a copy of --mib MiB into memory that was (a) faulted in by MADV_POPULATE_WRITE, (b) written
with zeros by memset, (c) never touched, (d) never touched but 2 MiB aligned and advised for
transparent huge pages (MADV_HUGEPAGE, as core::AlignedBuffer advises 2 MiB and more), then (a)
again. On a guest whose host backs memory at its first write, (a) costs nearly what (c) does.

    scripts/probe_first_write.py [--mib 5] [--sleep 0.5]
"""
import argparse
import ctypes
import time

MADV_POPULATE_WRITE = 23
MADV_HUGEPAGE = 14
PROT_RW, MAP_PRIVATE_ANON = 3, 0x22
HUGE = 2 << 20

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def fresh(n):
    return libc.mmap(None, n, PROT_RW, MAP_PRIVATE_ANON, -1, 0)


def fresh_huge(n):
    """n bytes at a 2 MiB boundary of a larger mapping, advised for huge pages."""
    p = fresh(n + HUGE)
    start = (p + HUGE - 1) // HUGE * HUGE
    libc.madvise(start, n, MADV_HUGEPAGE)
    return start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=float, default=5)
    ap.add_argument("--sleep", type=float, default=0.5, help="seconds between preparing and copying")
    a = ap.parse_args()
    n = int(a.mib * (1 << 20))
    src = fresh(n)
    libc.memset(src, 0x5A, n)

    def copy_ms(dst):
        t0 = time.perf_counter()
        libc.memcpy(dst, src, n)
        return (time.perf_counter() - t0) * 1e3

    populated, zeroed, untouched, huge = fresh(n), fresh(n), fresh(n), fresh_huge(n)
    rc = libc.madvise(populated, n, MADV_POPULATE_WRITE)
    libc.memset(zeroed, 0, n)
    time.sleep(a.sleep)
    print({"populate_write_ms": round(copy_ms(populated), 3), "madvise_rc": rc,
           "memset_zero_ms": round(copy_ms(zeroed), 3), "untouched_ms": round(copy_ms(untouched), 3),
           "untouched_huge_ms": round(copy_ms(huge), 3),
           "populated_again_ms": round(copy_ms(populated), 3)})


if __name__ == "__main__":
    main()
