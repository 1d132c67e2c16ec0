#!/usr/bin/env python3
"""Predicts what a collective and a training step cost, from a model of the link fitted to lesson
01's measurements and lesson 00's compute.

  tools/predict.py fit COLLECTIVES.csv [--backend NAME] [--min-size B] [--max-size B]
      each collective's latency (alpha) and bandwidth (1 / beta), fitted to the rows of
      `01_collectives --csv COLLECTIVES.csv` (only the rows from --min-size to --max-size bytes,
      when given; K, M, G = 2^10, 2^20, 2^30), and the largest relative difference between the
      fit and a row
  tools/predict.py collective NAME --ranks N --size BYTES --from COLLECTIVES.csv [fit flags]
      the time of one collective NAME (all_reduce, reduce_scatter, all_gather, broadcast) of
      BYTES (the whole buffer, as lesson 01 counts it) on N >= 2 ranks, from the fitted link
  tools/predict.py progress PROGRESS.csv [--backend NAME]
      the steps a started collective takes (each size's chain: per round, the calls that move
      nothing, then its parts), fitted to the rows of `01_collectives --progress --csv
      PROGRESS.csv`, and the largest difference of a row's wait, as a fraction of its time alone;
      and the share of a part's time the rank spends inside the call that moves it (in_call)
  tools/predict.py step STRATEGY --ranks N --trace DIR [--trace DIR ...] --units PLAN.csv
                   --links COLLECTIVES.csv [--links ...] [--progress async|calls|tests]
                   [--progress-rows PROGRESS.csv ...]
                   [--bucket BYTES,GBIT --unshaped-links COLLECTIVES.csv]
                   [--accum K] [--tokens T] [--timeline FILE] [--csv FILE] [fit flags]
      one training step of STRATEGY (naive, flat, overlap, bucketed, accumulate, zero1, zero2,
      zero3, mixed: lessons 02-10) on N >= 2 ranks: the compute from lesson 00's --trace DIR
      (or the lesson's own on one rank; at one rank's share of the batch; of several, runs side
      by side as the ranks run, the slowest, which every step waits for), the units from
      `05_bucketed_ddp plan --csv PLAN.csv`, each collective priced by the link fitted to
      COLLECTIVES.csv (of several runs, each row's median over them); prints the step, its
      exposed communication, tokens/s (T: one rank's tokens a step) and the model state per
      rank, and with --csv the same as a one-row CSV.
      With --bucket, the link is shaped by a token bucket of BYTES, filled at GBIT while the
      link is idle (as the course's cluster shapes its links), whose bytes cost what they do
      across the same hosts without shaping (fitted to --unshaped-links) (docs/scale.md, "The
      step model")
  tools/predict.py scale --units PLAN.csv --tokens T --seq T --tflops F --memory-gbps M
                   --node-link GBPS,ALPHA_US --network GBPS,ALPHA_US [--per-node G]
                   [--ranks 8,16,...] [--strategies LIST] [--csv FILE]
      the same step model carried to many ranks from stated figures: each rank's compute from
      the shape's FLOPs at F achieved TFLOP/s and AdamW's bytes at M GB/s; collectives on the
      node's link up to G ranks (8), on each rank's network link beyond; a CSV row per strategy
      and rank count: step, exposed communication, tokens/s, efficiency against one rank alone,
      model state per rank (docs/scale.md, "Carried to scale")
  tools/predict.py memory --params P[,P...] [--ranks 1,4,...] [--format fp32|16-bit] [--csv FILE]
      model state per rank (parameters, gradients and AdamW's state, as the ZeRO paper counts
      them) of data parallelism and ZeRO-1, -2 and -3 for models of P parameters (124M, 7.5B, 1T),
      in fp32 (lessons 02-09) or in 16 bits with an fp32 master copy (lesson 10), in GB
      (docs/scale.md, "A published figure")

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
import bisect
import collections
import csv
import json
import math
import os
import signal
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from whole_file import write_atomically  # noqa: E402  (the course's one way to write a file whole)

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
        raise Refusal(f"{rows[0][0]}: a fit needs rows of at least two sizes")
    saa = sum(a * a for a, _ in terms)
    sab = sum(a * b for a, b in terms)
    sbb = sum(b * b for _, b in terms)
    sa = sum(a for a, _ in terms)  # the right-hand side is 1 in every row
    sb = sum(b for _, b in terms)
    determinant = saa * sbb - sab * sab
    if not determinant > 0:  # every row's steps and bytes in one proportion: no line through them
        raise Refusal(f"{rows[0][0]}: its rows cannot tell latency from bandwidth (the same bytes a step "
                      "in every row)")
    alpha = (sa * sbb - sb * sab) / determinant
    beta = (sb * saa - sa * sab) / determinant
    if alpha < 0:  # a latency below zero is noise: the best fit with none
        alpha, beta = 0.0, sb / sbb
    elif beta < 0:
        alpha, beta = sa / saa, 0.0
    return alpha, beta


def read_table(path, backend, columns, what):
    """The rows of a CSV from lesson 01 (`what` names its flags) of one backend (the only one
    when None), each row a dict, after checking its columns and fields."""
    try:
        with open(path, newline="", encoding="utf-8") as file:
            reader = csv.DictReader(file)
            missing = [c for c in columns if c not in (reader.fieldnames or [])]
            if missing:
                raise Refusal(f"{path}: no column {missing[0]} (is it {what} output?)")
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
    return [(line, row) for line, row in enumerate(table, start=2) if backend is None or row["backend"] == backend]


def read_rows(path, backend, sizes=(0, math.inf)):
    """Lesson 01's rows of one backend and of sizes within sizes (bytes, both ends included):
    {collective: [(collective, ranks, size, seconds)]}."""
    table = read_table(path, backend, NEEDED_COLUMNS, "01_collectives --csv")
    by_collective = {}
    for line, row in table:
        if row["collective"] not in STEPS:
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


def refuse_mixed_backends(paths, backend, columns, what):
    """With no --backend, the runs at paths must share their one backend: each file alone is
    checked by read_table, and MPI's rows and NCCL's are not one link's."""
    if backend is not None or len(paths) < 2:
        return
    found = set()
    for path in paths:
        found |= {row["backend"] for _, row in read_table(path, None, columns, what)}
    if len(found) > 1:
        raise Refusal(f"{', '.join(paths)} hold several backends ({', '.join(sorted(found))}): choose one with "
                      "--backend")


def read_runs(paths, backend, sizes=(0, math.inf)):
    """Lesson 01's rows (read_rows) of one or more runs: each collective, rank count and size
    once, its time the median over the runs that measured it (one slow minute in one run is
    left out, where a fit of every row would lean towards it)."""
    refuse_mixed_backends(paths, backend, NEEDED_COLUMNS, "01_collectives --csv")
    times = {}
    for path in paths:
        for rows in read_rows(path, backend, sizes).values():
            for collective, ranks, size, seconds_taken in rows:
                times.setdefault((collective, ranks, size), []).append(seconds_taken)
    by_collective = {}
    for (collective, ranks, size), measured in times.items():
        by_collective.setdefault(collective, []).append((collective, ranks, size, statistics.median(measured)))
    return by_collective


STEP_COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather")  # what the strategies send


def fitted_runs(paths, args):
    """{collective: (alpha, beta)} of the step's collectives, fitted to lesson 01's runs at
    `paths` (read_runs), of the backend and sizes the fit flags (args) ask for; the rows of
    others (a broadcast) are not the step's business."""
    by_collective = read_runs(paths, args.backend, (args.min_size, args.max_size))
    return {collective: fit(rows) for collective, rows in by_collective.items() if collective in STEP_COLLECTIVES}


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


# ---------------------------------------------------------------- how a started collective moves

PROGRESS_COLUMNS = ("backend", "ranks", "collective", "size", "alone_us", "compute_us", "tests", "wait_us",
                    "tests_us")


def read_progress(path, backend):
    """Lesson 01's --progress rows of one backend: {(collective, ranks, size): [(alone, compute,
    tests, wait, in_tests)]}, seconds (in_tests: the time inside the tests together)."""
    rows = {}
    for line, row in read_table(path, backend, PROGRESS_COLUMNS, "01_collectives --progress --csv"):
        try:
            key = (row["collective"], int(row["ranks"]), int(row["size"]))
            alone, compute, tests, wait, in_tests = (
                float(row["alone_us"]) / 1e6, float(row["compute_us"]) / 1e6, int(row["tests"]),
                float(row["wait_us"]) / 1e6, float(row["tests_us"]) / 1e6)
        except (ValueError, TypeError):
            raise Refusal(f"{path}:{line}: ranks, size, tests and the times must be numbers")
        if not (0 < alone < math.inf and all(0 <= t < math.inf for t in (compute, wait, in_tests)) and tests >= 0):
            raise Refusal(f"{path}:{line}: a row needs a time alone above 0, times and tests of 0 or more")
        if key[1] < 2 or key[2] <= 0:
            raise Refusal(f"{path}:{line}: a row needs 2 or more ranks and a size above 0")
        rows.setdefault(key, []).append((alone, compute, tests, wait, in_tests))
    if not rows:
        raise Refusal(f"{path}: no rows" + (f" for backend {backend}" if backend is not None else ""))
    return rows


def read_progress_runs(paths, backend):
    """read_progress of one or more runs, each key's rows of every run together (a chain is
    then fitted to them all)."""
    refuse_mixed_backends(paths, backend, PROGRESS_COLUMNS, "01_collectives --progress --csv")
    rows = {}
    for path in paths:
        for key, measured in read_progress(path, backend).items():
            rows.setdefault(key, []).extend(measured)
    return rows


def chain_steps(chain):
    """The steps of a chain ((calls, parts), (calls, parts)), each a fraction of the collective's
    own time: a round is `calls` steps that move nothing (a message the other rank must answer)
    and `parts` steps that move an equal part of the round's bytes; a chain is one or two rounds
    of equal bytes (a round of no parts is none)."""
    rounds = [r for r in chain if r[1] > 0]
    return [share for calls, parts in rounds for share in [0.0] * calls + [1.0 / len(rounds) / parts] * parts]


class Link:
    """The rank's one link, moving one transfer at a time in the order they come; `free`: when
    the last ends. With a token bucket (`bucket`: its bytes and the rate in bytes a second that
    fills it while the link is idle, as tc's tbf shapes the course's cluster), the bytes a
    transfer sends while the bucket holds tokens skip the shaping: each costs `saving` seconds
    less than the fitted beta says (the fit is made back to back, with the bucket empty). It
    starts full: the forward pass leaves the link idle longer than the bucket takes to fill."""

    def __init__(self, bucket=None):
        self.free, self.bucket = 0.0, bucket
        self.tokens = bucket[0] if bucket else 0.0

    def move(self, at, seconds, sent=0.0, saving=0.0):
        """A transfer of `seconds` (at the fitted rate) sending `sent` bytes, ready at `at`:
        (start, end)."""
        start = max(at, self.free)
        if self.bucket:
            size, rate = self.bucket
            self.tokens = min(size, self.tokens + (start - self.free) * rate)
            fast = min(sent, self.tokens)
            self.tokens -= fast
            seconds -= fast * saving
        self.free = start + seconds
        return start, self.free


class Chain:
    """A started collective moving step by step (`chain_steps`, each step a fraction of its
    `own` seconds and of the `sent` bytes, each byte of which `saving` seconds less while the
    link's bucket holds tokens). A call of the rank's takes its next step if the step before has
    ended and no step was taken at that call: a step that moves nothing ends there; a part moves
    on the Link once the bytes before it on the link have, and the step after it waits for a
    call after it ends. Of a part's time, the share `in_call` is the rank's own core at work
    inside the call (copying, reducing): the call returns after it, and the rest moves beside
    the compute. In a wait, or any blocking call, the steps left run back to back. Each part
    moved is kept in `moving`."""

    def __init__(self, name, own, steps, in_call=0.0, sent=0.0, saving=0.0):
        self.name, self.own, self.steps, self.in_call = name, own, steps, in_call
        self.sent, self.saving = sent, saving
        self.taken, self.ready, self.last_call, self.moving = 0, -math.inf, -math.inf, []

    def done(self):
        return self.taken == len(self.steps)

    def step(self, at, link):
        """Takes the next step at `at` on the Link `link`."""
        share = self.steps[self.taken]
        self.taken += 1
        if share == 0:
            self.ready = at
            return
        start, self.ready = link.move(at, share * self.own, share * self.sent, self.saving)
        self.moving.append((start, self.ready))

    def call(self, at, link):
        """A call at `at`: the seconds the call itself takes."""
        if self.done() or at < self.ready or at <= self.last_call:
            return 0.0
        self.last_call = at
        self.step(at, link)
        return self.in_call * self.steps[self.taken - 1] * self.own

    def wait(self, at, link):
        while not self.done():
            self.step(max(at, self.ready), link)


def predicted_wait(steps, compute, tests):
    """The wait of a lesson 01 --progress row under a chain, alone on its link, in fractions of
    its time alone: the start and `tests` calls spread over `compute`, then the wait (Chain)."""
    chain, link = Chain("", 1.0, steps), Link()
    for k in range(tests + 1):
        chain.call(compute * k / tests if tests else 0.0, link)
    chain.wait(compute, link)
    return max(0.0, chain.ready - compute)


CHAINS = [((calls, parts), (more_calls, more_parts)) for calls in range(6) for parts in range(1, 7)
          for more_calls in range(6) for more_parts in range(7) if more_parts or not more_calls]


def fit_chain(rows):
    """The chain whose waits are closest to the rows [(alone, compute, tests, wait, in_tests)],
    in least squares of each wait as a fraction of its time alone (the fewest steps among
    equals), and the largest difference of a row, as that fraction."""
    best = None
    for chain in CHAINS:
        steps = chain_steps(chain)
        errors = [predicted_wait(steps, compute / alone, tests) - wait / alone
                  for alone, compute, tests, wait, _ in rows]
        key = (sum(e * e for e in errors), len(steps))
        if best is None or key < best[0]:
            best = (key, chain, max(abs(e) for e in errors))
    return best[1], best[2]


def fit_in_call(rows):
    """The share of a part's time that the rank spends inside the call that moves it, from the
    rows [(alone, compute, tests, wait, in_tests)] with tests: the time inside their tests over
    the time they took off the wait (alone - wait); 0 when they took none. On shared memory
    about 1 (the rank's core moves every byte); over TCP less, the less the slower the link.
    At most 1: more (buffers the compute between the tests pushed out of the caches) would
    cost a wait as much, which the time alone does not count either."""
    tested = [row for row in rows if row[2] > 0]
    saved = sum(max(alone - wait, 0.0) for alone, _, _, wait, _ in tested)
    return min(1.0, sum(in_tests for _, _, _, _, in_tests in tested) / saved) if saved > 0 else 0.0


def fit_chains(progress_rows):
    """{(collective, ranks): [(size, chain, in_call)]} by size, each fitted to the rows of its size."""
    chains = {}
    for (collective, ranks, size), rows in sorted(progress_rows.items()):
        chains.setdefault((collective, ranks), []).append((size, fit_chain(rows)[0], fit_in_call(rows)))
    return chains


def chain_for(chains, collective, ranks, nbytes):
    """The steps and in-call share of the chain fitted at the measured size nearest nbytes (in
    ratio)."""
    fitted = chains.get((collective, ranks))
    if not fitted:
        raise Refusal(f"no --progress rows of {collective} at {ranks} ranks (01_collectives --progress at -n {ranks})")
    _, chain, in_call = min(fitted, key=lambda sized: abs(math.log(max(nbytes, 1) / sized[0])))
    return chain_steps(chain), in_call


def chain_text(chain):
    return "; ".join(f"{calls} call{'s' * (calls != 1)}, then {parts} part{'s' * (parts != 1)}"
                     for calls, parts in chain if parts > 0)


def print_chains(progress_rows):
    print("%-12s %5s %10s %5s  %-44s %11s %8s" % ("collective", "ranks", "size", "rows", "steps: each round's calls "
                                                  "that move nothing, then its parts", "worst_error", "in_call"))
    for (collective, ranks, size), rows in sorted(progress_rows.items()):
        chain, worst = fit_chain(rows)
        print("%-12s %5d %10d %5d  %-44s %10.0f%% %7.0f%%" % (
            collective, ranks, size, len(rows), chain_text(chain), 100 * worst,
            100 * fit_in_call(rows)))


# ---------------------------------------------------------------- the step model

STRATEGIES = {
    # name: (lesson, what it does each step)
    "naive": ("02", "an all-reduce per parameter tensor after the backward pass"),
    "flat": ("03", "one all-reduce of every gradient after the backward pass"),
    "overlap": ("04", "an all-reduce per unit, started as the unit's gradients are final"),
    "bucketed": ("05", "an all-reduce per bucket of the plan, started as its last unit's gradients are final"),
    "accumulate": ("06", "K micro-batches (--accum K), lesson 05's buckets started in the last one's backward"),
    "zero1": ("07", "a reduce-scatter per unit after the backward pass, AdamW on 1/N, an all-gather per unit"),
    "zero2": ("08", "a reduce-scatter per unit in its hook (blocking), AdamW on 1/N, an all-gather per unit"),
    "zero3": ("09", "an all-gather per unit before each use (the next one prefetched; a unit used again at once "
                    "kept), a reduce-scatter per unit"),
    "mixed": ("10", "zero2 with the gradients and parameters sent in 16 bits"),
}


def read_compute(directory):
    """Lesson 00's compute from its trace (rank_0.json), in the order a step runs it: each
    use of a unit ("forward", unit) and ("backward", unit), the embedding's backward as
    ("embedding", 0), then data loading and the optimizer step; each the median seconds over
    the traced steps after the first (which warms the caches). Returns
    {"uses": [(pass, unit, seconds)], "data": seconds, "optimizer": seconds}."""
    path = os.path.join(directory, "rank_0.json")
    try:
        with open(path, encoding="utf-8") as file:
            slices = [e for e in json.load(file)["traceEvents"] if e.get("ph") == "X" and e.get("tid") == 0]
    except OSError as error:
        raise Refusal(f"{path}: cannot read: {error.strerror}")
    except (ValueError, KeyError, TypeError, AttributeError):
        raise Refusal(f"{path}: not a trace (--trace DIR writes one)")
    if not all(isinstance(e.get(key), (int, float)) and math.isfinite(e[key]) for e in slices for key in ("ts", "dur")):
        raise Refusal(f"{path}: a slice without a time (ts) and a duration (dur) in numbers")
    starts = sorted(e["ts"] for e in slices if str(e.get("name")).startswith("step#"))
    if len(starts) < 2:
        raise Refusal(f"{path}: needs 2 or more traced steps (the first is left out)")
    steps = [[] for _ in starts]
    for e in sorted(slices, key=lambda e: e["ts"]):
        index = bisect.bisect_right(starts, e["ts"]) - 1
        if index >= 0 and not str(e["name"]).startswith("step#"):
            steps[index].append((slice_kind(path, e["name"]), e["dur"] / 1e6))
    steps = steps[1:]
    if any([kind for kind, _ in step] != [kind for kind, _ in steps[0]] for step in steps):
        raise Refusal(f"{path}: the traced steps do not run the same slices")
    kinds = [kind for kind, _ in steps[0]]
    seconds_of = [statistics.median([step[i][1] for step in steps]) for i in range(len(kinds))]
    compute = {"uses": [], "data": 0.0, "optimizer": 0.0}
    for kind, duration in zip(kinds, seconds_of):
        if kind[0] in ("data", "optimizer"):
            compute[kind[0]] += duration
        else:
            compute["uses"].append((kind[0], kind[1], duration))
    for needed in ("forward", "backward"):
        if not any(p == needed for p, _, _ in compute["uses"]):
            raise Refusal(f"{path}: no {needed} slices per unit (is it lesson 00's --trace?)")
    return compute


def compute_seconds(compute):
    """All of one rank's compute in a step, on one rank: data, every use, the optimizer."""
    return compute["data"] + compute["optimizer"] + sum(seconds for _, _, seconds in compute["uses"])


def slowest_compute(directories):
    """The compute of the slowest of several traces (runs side by side, one a rank: a step of
    the ranks together waits for the slowest), as read_compute gives it."""
    computes = [read_compute(directory) for directory in directories]
    if any([(p, u) for p, u, _ in c["uses"]] != [(p, u) for p, u, _ in computes[0]["uses"]] for c in computes):
        raise Refusal(f"the traces {', '.join(directories)} do not run the same units (one shape and lesson, please)")
    return max(computes, key=compute_seconds)


def slice_kind(path, name):
    """(pass, unit) of a compute slice's name: ("forward", 3), ("embedding", 0), ("data", None)."""
    words = str(name).split()
    if len(words) == 3 and words[0] in ("forward", "backward") and words[1] == "unit" and words[2].isdigit():
        return (words[0], int(words[2]))
    if name == "backward embedding unit 0":
        return ("embedding", 0)
    if name in ("data", "optimizer step"):
        return (name.split()[0], None)
    raise Refusal(f"{path}: a compute slice the model does not know: {name} (is it lesson 00's --trace?)")


def read_units(path):
    """The units' sizes and buckets from `05_bucketed_ddp plan --csv PATH`: [(unit, count,
    bucket)] in the order the backward pass finishes them (L+1 .. 0)."""
    try:
        with open(path, newline="", encoding="utf-8") as file:
            reader = csv.DictReader(file)
            if not {"unit", "count", "bucket"} <= set(reader.fieldnames or []):
                raise Refusal(f"{path}: no columns unit, count and bucket (is it 05_bucketed_ddp plan --csv output?)")
            units = [(int(row["unit"]), int(row["count"]), int(row["bucket"])) for row in reader]
    except OSError as error:
        raise Refusal(f"{path}: cannot read: {error.strerror}")
    except (UnicodeDecodeError, csv.Error, ValueError, TypeError):
        raise Refusal(f"{path}: unit, count and bucket must be whole numbers in every row")
    if not units or sorted(u for u, _, _ in units) != list(range(len(units))):
        raise Refusal(f"{path}: needs one row per unit, 0 .. L+1")
    return units


class Streams:
    """One step on one rank: a compute stream and a communication stream, each running its
    work in order; a collective starts when it is issued and the stream is free. With `chains`
    (progress "tests"), a started collective moves instead as its Chain says: a step at each
    communicator call, the rest back to back once it is waited for. With `bucket` (the link's
    token bucket: bytes, bytes a second, and the fits of the link without it), see Link."""

    def __init__(self, fits, ranks, chains=None, bucket=None):
        self.fits, self.ranks, self.chains = fits, ranks, chains
        self.unshaped = bucket[2] if bucket else None
        self.link = Link(bucket[:2] if bucket else None)
        self.compute_free = 0.0
        self.slices = []  # (track, start, end, name): 0 compute, 1 communication
        self.in_flight = []  # started collectives not yet ended: Chains

    @property
    def comm_free(self):
        return self.link.free

    def compute(self, name, seconds, not_before=0.0):
        start = max(self.compute_free, not_before)
        self.compute_free = start + seconds
        self.slices.append((0, start, self.compute_free, name))
        return start, self.compute_free

    def own_seconds(self, name, nbytes):
        if name not in self.fits:
            raise Refusal(f"no measured rows of {name} to fit")
        return seconds(name, self.ranks, nbytes, *self.fits[name])

    def sent_and_saving(self, name, nbytes):
        """The bytes a rank sends in a collective, and the seconds a byte of them saves when the
        link's bucket holds a token for it: the fitted beta less the link's without shaping."""
        if self.unshaped is None:
            return 0.0, 0.0
        if name not in self.unshaped:
            raise Refusal(f"no measured rows of {name} without shaping to fit")
        return FACTOR[name](self.ranks) * nbytes, max(0.0, self.fits[name][1] - self.unshaped[name][1])

    def collective(self, name, nbytes, issued, blocking):
        """A collective issued at `issued`; a blocking one holds the compute until it ends.
        Returns when it ends, or None for a started one under chains (it ends when waited for)."""
        if self.chains is not None:
            if not blocking:
                steps, in_call = chain_for(self.chains, name, self.ranks, nbytes)
                self.in_flight.append(Chain(name, self.own_seconds(name, nbytes), steps, in_call,
                                            *self.sent_and_saving(name, nbytes)))
                # the start is a call: it moves each one in flight, on the rank's core for its share
                held = sum(chain.call(issued, self.link) for chain in self.in_flight)
                self.compute_free = max(self.compute_free, issued) + held
                return None
            self.wait(issued)  # a blocking call moves what is in flight first
        start, end = self.link.move(issued, self.own_seconds(name, nbytes), *self.sent_and_saving(name, nbytes))
        self.slices.append((1, start, end, name))
        if blocking:
            self.compute_free = max(self.compute_free, self.comm_free)
        return self.comm_free

    def wait(self, waited_at):
        """Waits, from `waited_at`, for every started collective in flight (their steps left
        back to back, the parts in the order they were started on the one link); the compute
        holds until then. Returns when the last ends."""
        if not self.in_flight:
            return self.comm_free
        for chain in self.in_flight:
            chain.wait(waited_at, self.link)
            self.slices += [(1, start, end, chain.name) for start, end in chain.moving]
        self.link.free = max([self.link.free] + [chain.ready for chain in self.in_flight])
        self.in_flight = []
        self.compute_free = max(self.compute_free, self.comm_free)
        return self.comm_free


def groups_of(strategy, units):
    """The gradient collectives of a step: [(units, floats)] in the order they are issued."""
    if strategy == "flat":
        return [([u for u, _, _ in units], sum(c for _, c, _ in units))]
    if strategy == "naive":  # a block's 12 tensors, the embeddings' 2 and the final LayerNorm's 2
        last = max(u for u, _, _ in units)
        tensors = {unit: 2 if unit in (0, last) else 12 for unit, _, _ in units}
        return [([unit], count / tensors[unit]) for unit, count, _ in units for _ in range(tensors[unit])]
    if strategy in ("bucketed", "accumulate"):
        buckets = collections.OrderedDict()
        for unit, count, bucket in units:
            buckets.setdefault(bucket, []).append((unit, count))
        return [([u for u, _ in members], sum(c for _, c in members)) for members in buckets.values()]
    return [([unit], count) for unit, count, _ in units]


def simulate(strategy, compute, units, ranks, fits, progress, accum=1, chains=None, bucket=None):
    """The step's two streams under the model: returns the Streams and the compute's own seconds.

    As the course's communicator has them: an all-reduce and an all-gather may be started and
    waited for later, a reduce-scatter only blocks. So lessons 04 and 05 start theirs as the
    gradients are final (with progress "calls", they move only when waited for, after the
    backward pass; with "tests", they move as `chains` says: a step at each start of another and
    at each blocking call); 06 does as 05 in the last of its `accum` micro-batches, the trace
    holding the compute of one; 08-10 block in the hook on each unit's reduce-scatter; 02, 03 and
    07 send after the backward pass; 09 prefetches the next use's all-gather (with "calls", it is
    waited for when needed; with "tests", waited for before the use); 07, 08 and 10 all-gather
    each unit after AdamW."""
    streams = Streams(fits, ranks, chains if progress == "tests" else None, bucket)
    element = 2 if strategy == "mixed" else 4
    count_of = {unit: count for unit, count, _ in units}
    grad_op = "reduce_scatter" if strategy in ("zero1", "zero2", "zero3", "mixed") else "all_reduce"
    started = strategy in ("overlap", "bucketed", "accumulate")  # non-blocking
    in_hook = strategy not in ("naive", "flat", "zero1") and (progress != "calls" or not started)
    sharded_optimizer = strategy in ("zero1", "zero2", "zero3", "mixed")
    streams.compute("data", compute["data"])
    uses = compute["uses"] * (accum if strategy == "accumulate" else 1)
    last_pass = len(uses) - len(compute["uses"])  # where the last micro-batch's uses start
    backward_start = last_pass + next(i for i, (p, _, _) in enumerate(compute["uses"]) if p != "forward")
    ready_at, pending = {}, list(groups_of(strategy, units))
    gathered = [None] * len(uses)

    def gather(i, issued, blocking):  # ZeRO-3: the parameters of use i, unless it needs none or has them
        if strategy != "zero3" or i >= len(uses) or uses[i][0] == "embedding" or gathered[i] is not None:
            return
        if i > 0 and uses[i - 1][1] == uses[i][1] and uses[i - 1][0] != "embedding":
            gathered[i] = gathered[i - 1]  # used again at once (the LM head into backward): kept
        else:
            gathered[i] = streams.collective("all_gather", element * count_of[uses[i][1]], issued, blocking)

    if progress != "calls":
        gather(0, streams.compute_free, True)
    for i, (kind, unit, duration) in enumerate(uses):
        if progress == "calls":
            gather(i, streams.compute_free, True)  # asked for when needed, and waited for
        if progress == "tests" and strategy == "zero3" and streams.in_flight:
            gathered[i] = streams.wait(streams.compute_free)  # the prefetch, waited for before the use
        name = f"{'backward' if kind == 'embedding' else kind} unit {unit}"
        start, end = streams.compute(name, duration, gathered[i] or 0.0)
        if progress != "calls":
            gather(i + 1, start, False)  # the next use's parameters, while this one computes
        if i >= backward_start and (unit != 0 or kind == "embedding"):  # the unit's gradients are final
            ready_at[unit] = end
            while in_hook and pending and all(u in ready_at for u in pending[0][0]):
                streams.collective(grad_op, element * pending.pop(0)[1], end, not started)
    for _, count in pending:  # what waits for the backward pass to end
        streams.collective(grad_op, element * count, streams.compute_free, True)
    streams.wait(streams.compute_free)  # "tests": the started ones, waited for before the optimizer
    optimizer = compute["optimizer"] / (ranks if sharded_optimizer else 1)
    streams.compute("optimizer step", optimizer, streams.comm_free)
    if strategy in ("zero1", "zero2", "mixed"):
        for unit, count, _ in units:
            streams.collective("all_gather", element * count, streams.compute_free, True)
    own = compute["data"] + sum(d for _, _, d in uses) + optimizer
    return streams, own


# Model state per rank as the ZeRO paper counts it: bytes a parameter kept whole on every rank,
# of 16 in all (the rest sharded over the ranks), by ZeRO stage (0: data parallelism) and number
# format. fp32 (lessons 02-09): parameters 4, gradients 4, AdamW's m and v 8. 16-bit (lesson 10):
# parameters 2, gradients 2, and in fp32 the master copy, m and v, 12. Working buffers (ZeRO-3's
# gathered units, activations) are not model state.
WHOLE_BYTES = {"fp32": (16, 8, 4, 0), "16-bit": (16, 4, 2, 0)}
STRATEGY_STATE = {"zero1": (1, "fp32"), "zero2": (2, "fp32"), "zero3": (3, "fp32"), "mixed": (2, "16-bit")}


def state_bytes(params, ranks, stage, number_format):
    """Model state per rank of `params` parameters at a ZeRO stage over `ranks` ranks."""
    whole = WHOLE_BYTES[number_format][stage]
    return whole * params + (16 - whole) * params / ranks


def model_state_bytes(strategy, units, ranks):
    """A strategy's model state per rank (lesson 10: ZeRO-2 in 16 bits, its default)."""
    stage, number_format = STRATEGY_STATE.get(strategy, (0, "fp32"))
    return state_bytes(sum(c for _, c, _ in units), ranks, stage, number_format)


def print_step(args):
    if args.ranks < 2:
        raise Refusal("--ranks must be 2 or more (one rank sends nothing)")
    if args.tokens < 0:
        raise Refusal("--tokens must be 0 (no tokens/s) or more")
    if args.timeline and args.csv and (args.timeline == args.csv or (
            os.path.exists(args.csv) and os.path.exists(args.timeline) and os.path.samefile(args.csv, args.timeline))):
        raise Refusal(f"--timeline and --csv name one file ({args.csv}): one would be lost under the other")
    if args.accum < 1 or (args.accum > 1 and args.strategy != "accumulate"):
        raise Refusal("--accum must be 1 or more, and above 1 only for the strategy accumulate")
    if (args.progress == "tests") != (args.progress_rows is not None):
        raise Refusal("--progress tests and --progress-rows FILE go together (the steps are fitted to FILE)")
    if (args.bucket is None) != (args.unshaped_links is None):
        raise Refusal("--bucket and --unshaped-links go together (a byte the bucket lets through costs what it "
                      "does without shaping)")
    inputs = [os.path.join(trace, "rank_0.json") for trace in args.trace] + [args.units] + args.links + (
        args.unshaped_links or []) + (args.progress_rows or [])
    refuse_overwriting(args.timeline, "--timeline", inputs)
    refuse_overwriting(args.csv, "--csv", inputs)
    compute = slowest_compute(args.trace)
    units = read_units(args.units)
    fits = fitted_runs(args.links, args)
    chains = fit_chains(read_progress_runs(args.progress_rows, args.backend)) if args.progress_rows else None
    bucket = args.bucket + (fitted_runs(args.unshaped_links, args),) if args.bucket else None
    streams, own = simulate(args.strategy, compute, units, args.ranks, fits, args.progress, args.accum, chains,
                            bucket)
    step = streams.compute_free
    lesson, what = STRATEGIES[args.strategy]
    print(f"{args.strategy} (lesson {lesson}: {what}) on {args.ranks} ranks, progress {args.progress}")
    print("step %.3f ms = compute %.3f ms + exposed communication %.3f ms (communicating %.3f ms in all)" % (
        1e3 * step, 1e3 * own, 1e3 * (step - own), 1e3 * sum(e - s for t, s, e, _ in streams.slices if t == 1)))
    if args.tokens:
        print("tokens/s %.0f (%d ranks x %d tokens a step)" % (args.ranks * args.tokens / step, args.ranks,
                                                               args.tokens))
    print("model state per rank %.3f MB (parameters, gradients and AdamW's state, as ZeRO counts them)" % (
        model_state_bytes(args.strategy, units, args.ranks) / 1e6))
    if args.timeline:
        write_output(args.timeline, "--timeline", timeline_text(streams.slices))
    if args.csv:
        write_output(args.csv, "--csv", prediction_text(args, streams, own, units))


def refuse_overwriting(path, flag, inputs):
    """An output may replace anything but one of the inputs."""
    if path and os.path.exists(path) and any(os.path.exists(i) and os.path.samefile(path, i) for i in inputs):
        raise Refusal(f"{flag} {path}: is one of this step's inputs")


def print_and_keep(text, csv_path):
    """Rows to the terminal, and the same to --csv when it is given."""
    sys.stdout.write(text)
    if csv_path:
        write_output(csv_path, "--csv", text)


def write_output(path, flag, text):
    """path whole or not at all (scripts/whole_file.py, the course's one way to write a file)."""
    try:
        write_atomically(path, text)
    except OSError as error:
        raise Refusal(f"{flag} {path}: cannot write: {error.strerror}")


def timeline_text(slices):
    """The step's slices in analyze_traces' timeline.csv columns, for scripts/report/timeline.gp."""
    return "rank,track,start_ms,end_ms,name\n" + "".join(
        "0,%d,%.4f,%.4f,%s\n" % (track, 1e3 * start, 1e3 * end, name) for track, start, end, name in slices)


PREDICTION_COLUMNS = ("strategy", "lesson", "ranks", "progress", "step_ms", "compute_ms", "exposed_ms",
                      "communicating_ms", "tokens_per_s", "model_state_mb")


def prediction_text(args, streams, own, units):
    step = streams.compute_free
    communicating = sum(e - s for t, s, e, _ in streams.slices if t == 1)
    values = (args.strategy, STRATEGIES[args.strategy][0], args.ranks, args.progress, "%.4f" % (1e3 * step),
              "%.4f" % (1e3 * own), "%.4f" % (1e3 * (step - own)), "%.4f" % (1e3 * communicating),
              "%.1f" % (args.ranks * args.tokens / step) if args.tokens else "",
              "%.6f" % (model_state_bytes(args.strategy, units, args.ranks) / 1e6))
    return ",".join(PREDICTION_COLUMNS) + "\n" + ",".join(str(v) for v in values) + "\n"
# ---------------------------------------------------------------- carried to scale

def shape_of(units):
    """(C, L) of the model a plan describes: a block's parameters are 12 C^2 + 13 C."""
    last = max(u for u, _, _ in units)
    blocks = [c for u, c, _ in units if 0 < u < last]
    if not blocks or len(set(blocks)) != 1:
        raise Refusal("the plan's units 1 .. L are not equal blocks of a GPT-2")
    channels = round((-13 + math.sqrt(169 + 48 * blocks[0])) / 24)
    if 12 * channels * channels + 13 * channels != blocks[0]:
        raise Refusal(f"a block of {blocks[0]} parameters is no GPT-2 block (12 C^2 + 13 C)")
    return channels, len(blocks)


def stated_compute(units, tokens, seq, flops, memory_bytes_per_s):
    """One rank's compute from stated figures, in lesson 00's order of uses: each use's FLOPs as
    MFU counts them (2 a parameter and token forward, twice that backward; attention over all
    T x T, 4 T C a token and layer forward; the embedding's lookups and the LayerNorms' few
    parameters as nothing) at `flops` achieved FLOP/s; AdamW's 28 bytes a parameter (reading
    parameters, gradients, m and v, writing three of them) at the stated memory bandwidth."""
    channels, layers = shape_of(units)
    count_of = {unit: count for unit, count, _ in units}
    last = layers + 1

    def forward_flops(unit, head=False):
        if unit == 0:
            return 2 * count_of[0] if head else 0  # the LM head multiplies by wte; the embedding looks up
        return 0 if unit == last else 2 * count_of[unit] + 4 * seq * channels

    uses = [("forward", 0, 0)] + [("forward", u, forward_flops(u)) for u in range(1, last + 1)]
    uses += [("forward", 0, forward_flops(0, head=True)), ("backward", 0, 2 * forward_flops(0, head=True))]
    uses += [("backward", u, 2 * forward_flops(u)) for u in range(last, 0, -1)] + [("embedding", 0, 0)]
    return {"uses": [(kind, unit, tokens * f / flops) for kind, unit, f in uses], "data": 0.0,
            "optimizer": 28 * sum(count_of.values()) / memory_bytes_per_s}


def stated_fits(ranks, per_node, node_link, network):
    """Each collective's (alpha, beta) at `ranks`, for a ring laid out node by node, as NCCL
    lays its rings: within a node (ranks <= per_node) all on the node's link; across nodes one
    hop in per_node crosses the network (alpha: the mean of a hop's), and every byte a rank
    sends goes through the slowest link on the ring, the rank's own network link (beta)."""
    node_gbps, node_alpha_us = node_link
    if ranks <= per_node:
        return {name: (node_alpha_us * 1e-6, 1 / (node_gbps * 1e9)) for name in STEPS}
    network_gbps, network_alpha_us = network
    alpha_us = ((per_node - 1) * node_alpha_us + network_alpha_us) / per_node
    return {name: (alpha_us * 1e-6, 1 / (min(node_gbps, network_gbps) * 1e9)) for name in STEPS}


def link_given(text):
    """GB/s,alpha_us: a link as stated."""
    try:
        gbytes_per_s, alpha_us = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not GBPS,ALPHA_US (e.g. 450,2)")
    if not (0 < gbytes_per_s < math.inf and 0 <= alpha_us < math.inf):
        raise argparse.ArgumentTypeError(f"'{text}': the bandwidth must be above 0 and alpha not below 0")
    return gbytes_per_s, alpha_us


def ranks_given(text, least=2):
    try:
        ranks = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of rank counts (8,16,32)")
    if not ranks or min(ranks) < least:
        raise argparse.ArgumentTypeError(f"'{text}': every rank count must be {least} or more")
    return ranks


SCALE_COLUMNS = ("strategy", "lesson", "ranks", "step_ms", "compute_ms", "exposed_ms", "tokens_per_s",
                 "tokens_per_s_per_rank", "efficiency", "model_state_gb")


def print_scale(args):
    unknown = [name for name in args.strategies if name not in STRATEGIES]
    if unknown:
        raise Refusal(f"--strategies: no strategy {unknown[0]} ({', '.join(STRATEGIES)})")
    if min(args.tokens, args.seq, args.per_node) < 1 or not min(args.tflops, args.memory_gbps) > 0 or not \
            math.isfinite(args.tflops + args.memory_gbps):
        raise Refusal("--tokens, --seq, --per-node, --tflops and --memory-gbps must be numbers above 0")
    refuse_overwriting(args.csv, "--csv", [args.units])
    print_and_keep(scale_text(args), args.csv)


def scale_text(args):
    units = read_units(args.units)
    compute = stated_compute(units, args.tokens, args.seq, args.tflops * 1e12, args.memory_gbps * 1e9)
    alone = compute_seconds(compute)  # one rank, nothing to send
    lines = [",".join(SCALE_COLUMNS)]
    for strategy in args.strategies:
        for ranks in args.ranks:
            fits = stated_fits(ranks, args.per_node, args.node_link, args.network)
            streams, own = simulate(strategy, compute, units, ranks, fits, "async")
            step = streams.compute_free
            lines.append(",".join(str(v) for v in (
                strategy, STRATEGIES[strategy][0], ranks, "%.4f" % (1e3 * step), "%.4f" % (1e3 * own),
                "%.4f" % (1e3 * (step - own)), "%.1f" % (ranks * args.tokens / step), "%.1f" % (args.tokens / step),
                "%.4f" % (alone / step), "%.6g" % (model_state_bytes(strategy, units, ranks) / 1e9))))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- memory

def params_given(text):
    """A parameter count: 124e6, 7.5B, 1T (K, M, B, T = 10^3 .. 10^12)."""
    value = with_suffix(text, {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}, "a parameter count (124M, 7.5B, 1T)")
    if not value >= 1:
        raise argparse.ArgumentTypeError(f"'{text}': a model has at least one parameter")
    return value


MEMORY_COLUMNS = ("params", "format", "ranks", "ddp_gb", "zero1_gb", "zero2_gb", "zero3_gb")


def memory_text(args):
    lines = [",".join(MEMORY_COLUMNS)]
    for params in args.params:
        for ranks in args.ranks:
            lines.append(",".join(["%.6g" % params, args.format, str(ranks)] + [
                "%.9g" % (state_bytes(params, ranks, stage, args.format) / 1e9) for stage in range(4)]))
    return "\n".join(lines) + "\n"


def with_suffix(text, scales, what):
    """A number, times the scale its last letter names (scales: letter -> factor), if any."""
    scale = scales.get(text[-1:].upper(), 1)
    try:
        value = float(text[:-1] if scale != 1 else text) * scale
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"'{text}' is not {what}")
    return value


def bytes_given(text):
    """A size in bytes, with lesson 01's suffixes: K, M, G = 2^10, 2^20, 2^30."""
    value = with_suffix(text, {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}, "a size in bytes (K, M, G allowed)")
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is below 0")
    return value


def bucket_given(text):
    """BYTES,GBIT: a token bucket's size (K, M, G allowed) and the rate that fills it, as
    (bytes, bytes a second)."""
    size, _, gbit = text.partition(",")
    try:
        rate = float(gbit) * 1e9 / 8
    except ValueError:
        rate = 0.0
    if not 0 < rate < math.inf:
        raise argparse.ArgumentTypeError(f"'{text}' is not BYTES,GBIT (a rate above 0 after the comma)")
    return bytes_given(size), rate


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
    moving = commands.add_parser("progress", help="fit the steps a started collective takes, and the share of "
                                                  "them inside the calls, to lesson 01's --progress rows")
    moving.add_argument("csv", help="01_collectives --progress --csv output")
    moving.add_argument("--backend", help="the rows of this backend (mpi, nccl), when the file holds several")
    one = commands.add_parser("collective", help="predict one collective's time")
    one.add_argument("name", choices=sorted(STEPS))
    one.add_argument("--ranks", type=int, required=True)
    one.add_argument("--size", type=bytes_given, required=True, help="bytes of the whole buffer (K, M, G allowed)")
    one.add_argument("--from", dest="csv", required=True, help="01_collectives --csv output to fit")
    add_fit_flags(one)
    step = commands.add_parser("step", help="predict one training step of a strategy")
    step.add_argument("strategy", choices=list(STRATEGIES))
    step.add_argument("--ranks", type=int, required=True)
    step.add_argument("--trace", required=True, action="append",
                      help="lesson 00's --trace DIR (or the lesson's own on one rank), at one rank's share of the "
                           "batch; again for each run side by side (one a rank): the slowest is the step's")
    step.add_argument("--units", required=True, help="05_bucketed_ddp plan --csv output, for the same shape")
    step.add_argument("--links", required=True, action="append",
                      help="01_collectives --csv output to fit; again for each run of it: each row's median")
    step.add_argument("--progress", choices=("async", "calls", "tests"), default="async",
                      help="async (the default): a started collective runs beside the compute (NCCL); calls: "
                           "only when waited for (the bound of MPI without a progress thread); tests: a step at "
                           "each call, as fitted to --progress-rows (MPICH's way: the CPU lessons')")
    step.add_argument("--progress-rows", action="append",
                      help="01_collectives --progress --csv output, for --progress tests; again for each run of "
                           "it: the chains are fitted to the rows of all")
    step.add_argument("--bucket", type=bucket_given,
                      help="BYTES,GBIT: the link's token bucket (tc's tbf: its burst, its rate), filled while the "
                           "link is idle, whose bytes skip the shaping; with --unshaped-links")
    step.add_argument("--unshaped-links", action="append",
                      help="01_collectives --csv output across the same hosts with no shaping (a link of 100 "
                           "Gbit/s), for --bucket: what a byte costs past it; again for each run of it")
    step.add_argument("--accum", type=int, default=1,
                      help="accumulate: micro-batches a step (the trace: lesson 00 at one of them, B/(N K) rows)")
    step.add_argument("--tokens", type=int, default=0, help="tokens one rank trains on a step (B/N x T), for tokens/s")
    step.add_argument("--timeline", help="also write the step's slices here, in analyze_traces' timeline.csv columns")
    step.add_argument("--csv", help="also write the prediction here as a one-row CSV")
    add_fit_flags(step)
    scale = commands.add_parser("scale", help="the step model carried to many ranks, from stated figures")
    scale.add_argument("--units", required=True, help="05_bucketed_ddp plan --csv output, for the shape")
    scale.add_argument("--tokens", type=int, required=True, help="tokens one rank trains on a step (B/N x T)")
    scale.add_argument("--seq", type=int, required=True, help="T, the sequence length")
    scale.add_argument("--tflops", type=float, required=True, help="one rank's achieved TFLOP/s (its peak x MFU)")
    scale.add_argument("--memory-gbps", type=float, required=True, help="one rank's memory bandwidth, GB/s")
    scale.add_argument("--per-node", type=int, default=8, help="ranks that share a node's link")
    scale.add_argument("--node-link", type=link_given, required=True, help="GBPS,ALPHA_US: the link within a node")
    scale.add_argument("--network", type=link_given, required=True,
                       help="GBPS,ALPHA_US: each rank's link between nodes")
    scale.add_argument("--ranks", type=ranks_given, default=[2 ** k for k in range(3, 11)],
                       help="rank counts, e.g. 8,64,512 [8,16,...,1024]")
    scale.add_argument("--strategies", type=lambda text: text.split(","),
                       default=[name for name in STRATEGIES if name != "accumulate"],
                       help="of " + ",".join(STRATEGIES) + " [all but accumulate, which is bucketed at one micro-batch]")
    scale.add_argument("--csv", help="also write the rows here")
    memory = commands.add_parser("memory", help="model state per rank of every ZeRO stage, as ZeRO counts it")
    memory.add_argument("--params", required=True, type=lambda text: [params_given(v) for v in text.split(",")],
                        help="parameter counts, e.g. 124M,7.5B,1T")
    memory.add_argument("--ranks", type=lambda text: ranks_given(text, least=1),
                        default=[1, 4, 16, 64, 256, 1024], help="rank counts [1,4,16,64,256,1024]")
    memory.add_argument("--format", choices=tuple(WHOLE_BYTES), default="fp32",
                        help="fp32 (lessons 02-09) or 16-bit with an fp32 master copy (lesson 10) [fp32]")
    memory.add_argument("--csv", help="also write the rows here")
    return parser.parse_args(argv)


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output, not with a traceback
    if any(arg in ("-h", "--help") for arg in argv[:1]):
        print(__doc__)
        return 0
    args = parse_arguments(argv)
    try:
        if args.command == "step":
            print_step(args)
            return 0
        if args.command == "scale":
            print_scale(args)
            return 0
        if args.command == "memory":
            print_and_keep(memory_text(args), args.csv)
            return 0
        if args.command == "progress":
            print_chains(read_progress(args.csv, args.backend))
            return 0
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
