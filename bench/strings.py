"""`str` in jitted code beside Numba 0.68.1 (where installed) and CPython, one run: the
cases of issue 44. Prints each case's best time, the ratios to Numba's and CPython's,
and the geomean speed against Numba."""

import time

import numba_rs

try:
    import numba
except ImportError:  # the CPython column still prints
    numba = None


def length_of(s):
    return len(s)


def build(n, piece):
    s = ""
    for _ in range(n):
        s = s + piece
    return len(s)


def count_in(words, probe):
    hits = 0
    for i in range(len(words)):
        if probe in words[i:i + 8]:
            hits += 1
    return hits


def compare_all(a, b, n):
    c = 0
    for _ in range(n):
        c += (a < b) + (a == b)
    return c


def str_of_ints(n):
    total = 0
    for i in range(n):
        total += len(str(i))
    return total


def split_join(text):
    return len("-".join(text.split()))


def sort_words(text):
    words = text.split()
    words.sort()
    return words[0]


def find_loop(text, needle):
    hits = 0
    start = 0
    while True:
        i = text.find(needle, start)
        if i < 0:
            break
        hits += 1
        start = i + 1
    return hits


def build_pieces(n):
    parts = []
    for i in range(n):
        parts.append("ab")
    return len("".join(parts))


def upper_of(text):
    return len(text.upper())


WORDS = " ".join(f"w{(i * 7919) % 100_003}x" for i in range(100_000))
MEGA = ("lorem ipsum dolor sit amet " * 40_000)[:1_000_000]

CASES = [
    ("str(i) for 10^6 ints", str_of_ints, (1_000_000,), 1),
    ("split and join 1 MB", split_join, (MEGA,), 3),
    ("sort 10^5 words", sort_words, (WORDS,), 1),
    ("find in a loop over 1 MB", find_loop, (MEGA, "dolor"), 3),
    ("build from 10^5 pieces (join)", build_pieces, (100_000,), 3),
    ("upper() of 1 MB", upper_of, (MEGA,), 3),
    ("pass a 100-char str, return len", length_of, ("x" * 100,), 100_000),
    ("build a str of 2000 pieces by +", build, (2000, "ab"), 20),
    ("slice + `in` over 10^4 windows", count_in, ("lorem ipsum dolor " * 600, "sum"), 5),
    ("compare two 1000-char strs 10^4 times", compare_all, ("é" * 999 + "a", "é" * 999 + "b", 10_000), 5),
]


def timed(f, args, repeat):
    f(*args)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(repeat):
            f(*args)
        best = min(best, (time.perf_counter() - t) / repeat)
    return best


def main():
    print(f"{'case':40} {'numba_rs':>10} {'numba':>10} {'CPython':>10}  vs numba  vs CPython")
    ratios = []
    for name, fn, args, repeat in CASES:
        ours = timed(numba_rs.njit(fn), args, repeat)
        theirs = timed(numba.njit(fn), args, repeat) if numba else float("nan")
        py = timed(fn, args, repeat)
        ratios.append(theirs / ours)
        print(
            f"{name:40} {ours * 1e6:>8.1f}us {theirs * 1e6:>8.1f}us {py * 1e6:>8.1f}us"
            f"  {ours / theirs:>7.2f}x  {ours / py:>8.2f}x"
        )
    if numba:
        g = 1.0
        for r in ratios:
            g *= r
        print(f"geomean speed vs Numba: {g ** (1 / len(ratios)):.2f}x")


if __name__ == "__main__":
    main()
