#!/usr/bin/env python3
"""Predicts what a collective costs from a model of the link, fitted to lesson 01's measurements.

  tools/predict.py fit COLLECTIVES.csv [--backend NAME] [--min-size B] [--max-size B]
      each collective's latency (alpha) and bandwidth (1 / beta), fitted to the rows of
      `01_collectives --csv COLLECTIVES.csv` (only the rows from --min-size to --max-size bytes,
      when given; K, M, G = 2^10, 2^20, 2^30), and the largest relative difference between the
      fit and a row
  tools/predict.py collective NAME --ranks N --size BYTES --from COLLECTIVES.csv [fit flags]
      the time of one collective NAME (all_reduce, reduce_scatter, all_gather, broadcast) of
      BYTES (the whole buffer, as lesson 01 counts it) on N >= 2 ranks, from the fitted link

The model (alpha-beta, over a ring, as NCCL and MPICH run large messages): a collective of n
bytes on N ranks takes  steps(N) x alpha + factor(N) x n x beta,  where alpha is the cost of
one step (latency and the per-message overhead), beta the seconds per byte one link moves, and

  collective       steps(N)        factor(N)      (factor: lesson 01's busbw factor)
  all_reduce       2 (N - 1)       2 (N - 1) / N   a reduce-scatter, then an all-gather
  reduce_scatter   N - 1           (N - 1) / N
  all_gather       N - 1           (N - 1) / N
  broadcast        ceil(log2 N)    1               a pipelined tree: each byte crosses one link per rank

alpha and beta are fitted per collective (each library runs each collective its own way), by
least squares on the relative error, so that small messages, where alpha dominates, count as
much as large ones. A fit at one N predicts another N through steps(N) and factor(N): that is
the model's claim, which runs at several N test.
"""
import argparse
import csv
import math
import signal
import sys

STEPS = {
    "all_reduce": lambda ranks: 2 * (ranks - 1),
    "reduce_scatter": lambda ranks: ranks - 1,
    "all_gather": lambda ranks: ranks - 1,
    "broadcast": lambda ranks: math.ceil(math.log2(ranks)),
}
FACTOR = {
    "all_reduce": lambda ranks: 2 * (ranks - 1) / ranks,
    "reduce_scatter": lambda ranks: (ranks - 1) / ranks,
    "all_gather": lambda ranks: (ranks - 1) / ranks,
    "broadcast": lambda ranks: 1.0,
}
NEEDED_COLUMNS = ("backend", "ranks", "collective", "size", "time_us")


class Refusal(Exception):
    """Bad input: one line naming the problem, exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, with its complaints as one line, as the course's programs give them."""

    def error(self, message):
        print(f"predict: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def seconds(collective, ranks, size, alpha, beta):
    """The model's time of one collective of size bytes on ranks ranks."""
    if ranks == 1:
        return 0.0  # nothing to send
    return STEPS[collective](ranks) * alpha + FACTOR[collective](ranks) * size * beta


def fit(rows):
    """alpha and beta (seconds, seconds per byte) that make the model closest to rows of
    (collective, ranks, size, seconds), all of one collective, in relative error; neither
    negative. Needs rows of at least two sizes."""
    # each row: steps * alpha + bytes * beta = t, divided by t so that every row weighs the same
    terms = [(STEPS[c](n) / t, FACTOR[c](n) * size / t) for c, n, size, t in rows]
    if len({size for _, _, size, _ in rows}) < 2:
        raise Refusal("a fit needs rows of at least two sizes")
    saa = sum(a * a for a, _ in terms)
    sab = sum(a * b for a, b in terms)
    sbb = sum(b * b for _, b in terms)
    sa = sum(a for a, _ in terms)  # the right-hand side is 1 in every row
    sb = sum(b for _, b in terms)
    determinant = saa * sbb - sab * sab
    alpha = (sa * sbb - sb * sab) / determinant
    beta = (sb * saa - sa * sab) / determinant
    if alpha < 0:  # a latency below zero is noise: the best fit with none
        alpha, beta = 0.0, sb / sbb
    elif beta < 0:
        alpha, beta = sa / saa, 0.0
    return alpha, beta


def read_rows(path, backend, sizes=(0, math.inf)):
    """Lesson 01's rows of one backend and of sizes within sizes (bytes, both ends included):
    {collective: [(collective, ranks, size, seconds)]}."""
    try:
        with open(path, newline="", encoding="utf-8") as file:
            reader = csv.DictReader(file)
            missing = [c for c in NEEDED_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise Refusal(f"{path}: no column {missing[0]} (is it 01_collectives --csv output?)")
            table = list(reader)
    except OSError as error:
        raise Refusal(f"{path}: cannot read: {error.strerror}")
    except (UnicodeDecodeError, csv.Error) as error:
        raise Refusal(f"{path}: not a CSV file of text: {error}")
    if any(None in row.values() for row in table):
        raise Refusal(f"{path}: a row has fewer fields than the header")
    backends = sorted({row["backend"] for row in table})
    if backend is None and len(backends) > 1:
        raise Refusal(f"{path} holds several backends ({', '.join(backends)}): choose one with --backend")
    by_collective = {}
    for line, row in enumerate(table, start=2):
        if (backend is not None and row["backend"] != backend) or row["collective"] not in STEPS:
            continue  # the course's own ring exercise is not a library collective
        try:
            measured = (row["collective"], int(row["ranks"]), float(row["size"]), float(row["time_us"]) / 1e6)
        except ValueError:
            raise Refusal(f"{path}:{line}: ranks, size and time_us must be numbers")
        if measured[1] < 2 or not (0 < measured[3] < math.inf) or not (0 <= measured[2] < math.inf):
            raise Refusal(f"{path}:{line}: a row needs 2 or more ranks, a size and a time above 0")
        if not sizes[0] <= measured[2] <= sizes[1]:
            continue
        by_collective.setdefault(row["collective"], []).append(measured)
    if not by_collective:
        raise Refusal(f"{path}: no rows of all_reduce, reduce_scatter, all_gather or broadcast"
                      + (f" for backend {backend}" if backend is not None else "") + " within the sizes asked")
    return by_collective


def worst_error(rows, alpha, beta):
    """The largest relative difference between the model and a row."""
    return max(abs(seconds(c, n, size, alpha, beta) - t) / t for c, n, size, t in rows)


def print_fits(by_collective):
    fits = {collective: fit(rows) for collective, rows in by_collective.items()}  # all, before a line
    print("%-15s %6s %5s %10s %12s %12s" % ("collective", "ranks", "rows", "alpha_us", "bandwidth_GBps",
                                             "worst_error"))
    for collective, rows in sorted(by_collective.items()):
        alpha, beta = fits[collective]
        ranks = ",".join(str(n) for n in sorted({n for _, n, _, _ in rows}))
        bandwidth = "inf" if beta == 0 else "%.3f" % (1 / beta / 1e9)
        print("%-15s %6s %5d %10.2f %14s %11.1f%%" % (collective, ranks, len(rows), alpha * 1e6, bandwidth,
                                                     100 * worst_error(rows, alpha, beta)))


def print_prediction(by_collective, collective, ranks, size):
    if collective not in by_collective:
        raise Refusal(f"no measured rows of {collective} to fit")
    alpha, beta = fit(by_collective[collective])
    predicted = seconds(collective, ranks, size, alpha, beta)
    algbw = size / predicted / 1e9 if predicted > 0 else math.inf
    print("%s of %d bytes on %d ranks: %.1f us (algbw %.3f GB/s, busbw %.3f GB/s)" % (
        collective, size, ranks, predicted * 1e6, algbw, algbw * FACTOR[collective](ranks)))


def bytes_given(text):
    """A size in bytes, with lesson 01's suffixes: K, M, G = 2^10, 2^20, 2^30."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    try:
        value = float(text[:-1] if scale > 1 else text) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size in bytes (K, M, G allowed)")
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is below 0")
    return value


def add_fit_flags(parser):
    parser.add_argument("--backend", help="the rows of this backend (mpi, nccl), when the file holds several")
    parser.add_argument("--min-size", type=bytes_given, default=0, help="fit to rows of at least this many bytes")
    parser.add_argument("--max-size", type=bytes_given, default=math.inf,
                        help="fit to rows of at most this many bytes")


def parse_arguments(argv):
    parser = OneLineParser(prog="predict", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    fitting = commands.add_parser("fit", help="fit each collective's alpha and beta to lesson 01's rows")
    fitting.add_argument("csv", help="01_collectives --csv output")
    add_fit_flags(fitting)
    one = commands.add_parser("collective", help="predict one collective's time")
    one.add_argument("name", choices=sorted(STEPS))
    one.add_argument("--ranks", type=int, required=True)
    one.add_argument("--size", type=bytes_given, required=True, help="bytes of the whole buffer (K, M, G allowed)")
    one.add_argument("--from", dest="csv", required=True, help="01_collectives --csv output to fit")
    add_fit_flags(one)
    return parser.parse_args(argv)


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output, not with a traceback
    if any(arg in ("-h", "--help") for arg in argv[:1]):
        print(__doc__)
        return 0
    args = parse_arguments(argv)
    try:
        if args.command == "collective" and args.ranks < 2:
            raise Refusal("--ranks must be 2 or more (one rank sends nothing)")
        by_collective = read_rows(args.csv, args.backend, (args.min_size, args.max_size))
        if args.command == "fit":
            print_fits(by_collective)
        else:
            print_prediction(by_collective, args.name, args.ranks, args.size)
    except Refusal as refusal:
        print(f"predict: {refusal}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
