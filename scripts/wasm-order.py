#!/usr/bin/env python3
"""Names a wasm module's functions so that their order by name puts alike bodies
side by side, for brotli: scripts/dist then runs `wasm-opt --reorder-functions-by-name`
on the copy this writes (and drops the names). Function order changes no behaviour
(calls, the table and the exports follow the indices wasm-opt rewrites); it only
changes how far apart brotli finds repeats. docs/performance.md, "Session 24".

    scripts/wasm-order.py IN.wasm OUT.wasm

The order is a greedy chain: start at the largest body, then repeatedly take the
not yet placed body most like the last one (Jaccard similarity of their 4-byte
shingles), looking among the 80 nearest on either side in two orders where alike
bodies sit close (by a MinHash signature; by size); when none shares 5% of its
shingles, take the smallest body left. Deterministic: no set is iterated for a
choice and the hashes are zlib's CRC-32.
"""
import sys
import zlib

SHINGLE = 4
WINDOW = 80
MIN_SIMILAR = 0.05


def leb(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def uleb(n):
    out = bytearray()
    while True:
        x = n & 0x7F
        n >>= 7
        if n:
            out.append(x | 0x80)
        else:
            out.append(x)
            return bytes(out)


def read(d):
    """(number of imported functions, function bodies, (start, end) of the name section)."""
    assert d[:8] == b"\0asm\1\0\0\0", "not a wasm module"
    i, imported, bodies, names = 8, 0, [], None
    while i < len(d):
        start, sid = i, d[i]
        size, i = leb(d, i + 1)
        end = i + size
        if sid == 2:  # imports: count the functions
            n, j = leb(d, i)
            for _ in range(n):
                for _ in range(2):  # module and field names
                    ln, j = leb(d, j)
                    j += ln
                kind, j = d[j], j + 1
                if kind == 0:  # function: type index
                    _, j = leb(d, j)
                    imported += 1
                elif kind == 1:  # table: reftype, limits
                    flags = d[j + 1]
                    _, j = leb(d, j + 2)
                    if flags & 1:
                        _, j = leb(d, j)
                elif kind == 2:  # memory: limits
                    flags = d[j]
                    _, j = leb(d, j + 1)
                    if flags & 1:
                        _, j = leb(d, j)
                elif kind == 3:  # global: valtype, mutability
                    j += 2
                else:
                    sys.exit(f"wasm-order: unknown import kind {kind}")
        elif sid == 10:  # code
            n, j = leb(d, i)
            for _ in range(n):
                ln, k = leb(d, j)
                bodies.append(bytes(d[k : k + ln]))
                j = k + ln
        elif sid == 0:
            ln, j = leb(d, i)
            if d[j : j + ln] == b"name":
                names = (start, end)
        i = end
    return imported, bodies, names


def shingles(body):
    return {body[t : t + SHINGLE] for t in range(max(1, len(body) - SHINGLE + 1))}


def signature(body):
    sh = shingles(body)
    return tuple(min(zlib.crc32(s, seed) for s in sh) for seed in (7, 11, 13))


def order(bodies):
    """The bodies' indices in the order to write them."""
    n = len(bodies)
    sh = [shingles(b) for b in bodies]
    sig = [signature(b) for b in bodies]
    views = [
        sorted(range(n), key=lambda x: (sig[x], x)),
        sorted(range(n), key=lambda x: (len(bodies[x]), x)),
    ]
    where = [{x: p for p, x in enumerate(v)} for v in views]
    placed = [False] * n
    smallest = 0  # position in views[1] of the smallest body not placed
    out = []
    cur = max(range(n), key=lambda x: (len(bodies[x]), -x))
    while True:
        out.append(cur)
        placed[cur] = True
        if len(out) == n:
            return out
        near = set()
        for v, w in zip(views, where):
            p = w[cur]
            near.update(x for x in v[max(0, p - WINDOW) : p + WINDOW + 1] if not placed[x])
        best, best_s = None, -1.0
        for x in sorted(near):
            s = len(sh[cur] & sh[x]) / (len(sh[cur] | sh[x]) or 1)
            if s > best_s:
                best, best_s = x, s
        if best is None or best_s < MIN_SIMILAR:
            while placed[views[1][smallest]]:
                smallest += 1
            best = views[1][smallest]
        cur = best


def main():
    src, dst = sys.argv[1:3]
    d = open(src, "rb").read()
    imported, bodies, names = read(d)
    rank = [0] * len(bodies)
    for r, x in enumerate(order(bodies)):
        rank[x] = r
    # A "name" section with function names only: imports keep their place (they
    # come first whatever their names), each body is named by its rank.
    sub = bytearray(uleb(imported + len(bodies)))
    for x in range(imported + len(bodies)):
        name = b"!%06d" % x if x < imported else b"%06d" % rank[x - imported]
        sub += uleb(x) + uleb(len(name)) + name
    content = uleb(4) + b"name" + b"\x01" + uleb(len(sub)) + bytes(sub)
    section = b"\x00" + uleb(len(content)) + content
    if names:
        d = d[: names[0]] + d[names[1] :]
    open(dst, "wb").write(d + section)


if __name__ == "__main__":
    main()
