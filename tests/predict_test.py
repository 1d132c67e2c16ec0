#!/usr/bin/env python3
"""tools/predict.py's link model: known alpha and beta give the model's times; rows made
from known alpha and beta are fitted back to them (exactly, and within the noise when noisy);
a fit at 2 ranks predicts 4 ranks through the model's steps and factors; bad input is
refused with one line. Run by tests/test_predict.c."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "tools", "predict.py")
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import predict  # noqa: E402

ALPHA, BETA = 12e-6, 1 / 5e9  # 12 us a step, 5 GB/s a link
SIZES = [1 << k for k in range(10, 27, 2)]  # 1 KB to 64 MB
HEADER = "backend,ranks,collective,size,count,type,redop,root,in_place,time_us,algbw_GBps,busbw_GBps,wrong,ratio\n"


def rows(collective, ranks, noise=lambda i: 1.0):
    return [(collective, ranks, size, predict.seconds(collective, ranks, size, ALPHA, BETA) * noise(i))
            for i, size in enumerate(SIZES)]


def csv_text(measured, backend="mpi"):
    return HEADER + "".join(f"{backend},{n},{c},{int(size)},{int(size) // 4},float,sum,-1,1,{t * 1e6:.6f},0,0,0,\n"
                            for c, n, size, t in measured)


def run_tool(*args):
    done = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


class Model(unittest.TestCase):
    def test_known_alpha_and_beta_give_the_model_times(self):
        n = 64 << 20
        self.assertAlmostEqual(predict.seconds("all_reduce", 4, n, ALPHA, BETA), 6 * ALPHA + 1.5 * n * BETA)
        self.assertAlmostEqual(predict.seconds("reduce_scatter", 4, n, ALPHA, BETA), 3 * ALPHA + 0.75 * n * BETA)
        self.assertAlmostEqual(predict.seconds("all_gather", 8, n, ALPHA, BETA), 7 * ALPHA + 0.875 * n * BETA)
        self.assertAlmostEqual(predict.seconds("broadcast", 5, n, ALPHA, BETA), 3 * ALPHA + n * BETA)
        self.assertEqual(predict.seconds("all_reduce", 1, n, ALPHA, BETA), 0.0)

    def test_a_fit_recovers_the_alpha_and_beta_it_was_made_from(self):
        for collective in predict.STEPS:
            alpha, beta = predict.fit(rows(collective, 2))
            self.assertAlmostEqual(alpha / ALPHA, 1.0, places=9, msg=collective)
            self.assertAlmostEqual(beta / BETA, 1.0, places=9, msg=collective)

    def test_a_noisy_fit_stays_within_the_noise(self):
        wobble = lambda i: 1.0 + (0.03 if i % 2 else -0.03)  # every row 3% off, alternately
        alpha, beta = predict.fit(rows("all_reduce", 2, wobble))
        self.assertLess(abs(alpha / ALPHA - 1), 0.06)
        self.assertLess(abs(beta / BETA - 1), 0.06)

    def test_a_fit_at_two_ranks_predicts_four(self):
        alpha, beta = predict.fit(rows("all_reduce", 2))
        for size in SIZES:
            self.assertAlmostEqual(predict.seconds("all_reduce", 4, size, alpha, beta),
                                   predict.seconds("all_reduce", 4, size, ALPHA, BETA), delta=1e-12)

    def test_rows_that_cannot_tell_latency_from_bandwidth_are_refused(self):
        # 2 ranks: 2 steps and 1024 bytes a step; 4 ranks: 6 steps and 3072: one proportion
        measured = [("all_reduce", 2, 1024, 1e-4), ("all_reduce", 4, 2048, 3e-4)]
        with self.assertRaisesRegex(predict.Refusal, "all_reduce: its rows cannot tell latency from bandwidth"):
            predict.fit(measured)
        with self.assertRaisesRegex(predict.Refusal, "all_gather: a fit needs rows of at least two sizes"):
            predict.fit([("all_gather", 2, 1024, 1e-4), ("all_gather", 2, 1024, 2e-4)])

    def test_a_negative_latency_is_fitted_as_none(self):
        measured = [("all_gather", 2, size, size * BETA) for size in SIZES]  # bandwidth alone
        measured[0] = ("all_gather", 2, SIZES[0], SIZES[0] * BETA * 0.5)  # small message faster than the line
        alpha, beta = predict.fit(measured)
        self.assertEqual(alpha, 0.0)
        self.assertGreater(beta, 0.0)


class CommandLine(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "collectives.csv")
        with open(self.path, "w") as file:
            file.write(csv_text(rows("all_reduce", 2) + rows("broadcast", 2)))

    def tearDown(self):
        self.dir.cleanup()

    def test_fit_prints_each_collective(self):
        status, out, err = run_tool("fit", self.path)
        self.assertEqual(status, 0, err)
        line = next(line for line in out.splitlines() if line.startswith("all_reduce"))
        self.assertIn("12.00", line)   # alpha in us
        self.assertIn("5.000", line)   # GB/s
        self.assertIn("0.0%", line)    # worst error

    def test_collective_predicts_from_the_fit(self):
        status, out, err = run_tool("collective", "all_reduce", "--ranks", "4", "--size", str(64 << 20),
                                    "--from", self.path)
        self.assertEqual(status, 0, err)
        expected = predict.seconds("all_reduce", 4, 64 << 20, ALPHA, BETA) * 1e6
        self.assertIn("%.1f us" % expected, out)

    def test_bad_input_is_one_line_and_status_2(self):
        with open(self.path, "w") as file:
            file.write("collective,size\nall_reduce,4\n")
        status, out, err = run_tool("fit", self.path)
        self.assertEqual((status, out), (2, ""))
        self.assertEqual(err, f"predict: {self.path}: no column backend (is it 01_collectives --csv output?)\n")
        for args in (["fit", os.path.join(self.dir.name, "none.csv")], ["fit", self.path, "--max-size", "4X"],
                     ["collective", "all_reduce", "--ranks", "1", "--size", "1", "--from", self.path], ["bogus"]):
            status, out, err = run_tool(*args)
            self.assertEqual((status, out), (2, ""), args)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertTrue(err.startswith("predict: "), err)

    def test_a_size_that_is_not_a_number_is_refused(self):
        for size in ("nan", "inf"):
            status, out, err = run_tool("collective", "all_reduce", "--ranks", "2", "--size", size, "--from", self.path)
            self.assertEqual((status, out), (2, ""), size)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn(f"'{size}'", err)

    def test_a_broken_csv_is_one_line_and_status_2(self):
        for text in (HEADER + "mpi,2,all_reduce\n", HEADER + "mpi,2,all_reduce,1024,256,float,sum,-1,1,nan,0,0,0,\n",
                     b"\xff\xfe not text\n"):
            with open(self.path, "wb") as file:
                file.write(text if isinstance(text, bytes) else text.encode())
            status, out, err = run_tool("fit", self.path)
            self.assertEqual((status, out), (2, ""), err)
            self.assertEqual(len(err.splitlines()), 1, err)

    def test_a_size_range_without_rows_is_refused(self):
        status, _, err = run_tool("fit", self.path, "--min-size", "1e12")
        self.assertEqual(status, 2)
        self.assertIn("within the sizes asked", err)
        status, out, err = run_tool("fit", self.path, "--max-size", str(1 << 20))
        self.assertEqual(status, 0, err)
        self.assertIn(" 6 ", next(line for line in out.splitlines() if line.startswith("all_reduce")))  # 1K..1M

    def test_several_backends_need_a_choice(self):
        with open(self.path, "w") as file:
            file.write(csv_text(rows("all_reduce", 2)) + csv_text(rows("all_reduce", 2), "nccl")[len(HEADER):])
        status, _, err = run_tool("fit", self.path)
        self.assertEqual(status, 2)
        self.assertIn("choose one with --backend", err)
        status, _, err = run_tool("fit", self.path, "--backend", "nccl")
        self.assertEqual(status, 0, err)


# ---------------------------------------------------------------- the step model

MS = 1e-3
FITS = {name: (ALPHA, BETA) for name in ("all_reduce", "reduce_scatter", "all_gather")}
UNITS = [(2, 100, 0), (1, 1000, 0), (0, 10000, 1)]  # backward order: unit, floats, bucket
COMPUTE = {"data": 0.5 * MS, "optimizer": 2 * MS,
           "uses": [("forward", 0, 1 * MS), ("forward", 1, 2 * MS), ("forward", 2, 1 * MS), ("forward", 0, 3 * MS),
                    ("backward", 0, 3 * MS), ("backward", 2, 1 * MS), ("backward", 1, 2 * MS),
                    ("embedding", 0, 1 * MS)]}
OWN = 0.5 * MS + 7 * MS + 7 * MS  # data, forward, backward


def time_of(collective, floats, ranks=2, element=4):
    return predict.seconds(collective, ranks, element * floats, ALPHA, BETA)


def step_of(strategy, ranks=2, progress="async", fits=FITS):
    streams, own = predict.simulate(strategy, COMPUTE, UNITS, ranks, fits, progress)
    return streams.compute_free, own


class Step(unittest.TestCase):
    def test_flat_waits_for_one_all_reduce_of_everything(self):
        step, own = step_of("flat")
        self.assertAlmostEqual(own, OWN + 2 * MS)
        self.assertAlmostEqual(step, OWN + time_of("all_reduce", 11100) + 2 * MS)

    def test_overlap_on_a_fast_link_exposes_only_the_last_unit(self):
        # unit 2 is final at 11.5 ms, unit 1 at 13.5 ms: both sent long before unit 0 is, at 14.5 ms
        step, _ = step_of("overlap")
        self.assertAlmostEqual(step, OWN + time_of("all_reduce", 10000) + 2 * MS)

    def test_overlap_on_a_slow_link_queues_the_units(self):
        slow = {name: (1 * MS, 0.0) for name in FITS}  # every all-reduce at 2 ranks: 2 ms
        step, _ = step_of("overlap", fits=slow)
        # unit 2 from 11.5 to 13.5, unit 1 from 13.5 to 15.5, unit 0 from 15.5 to 17.5; then AdamW
        self.assertAlmostEqual(step, 17.5 * MS + 2 * MS)

    def test_naive_sends_each_tensor_after_backward(self):
        step, _ = step_of("naive")  # the final LayerNorm's 2 tensors, a block's 12, the embeddings' 2
        sends = 2 * time_of("all_reduce", 100 / 2) + 12 * time_of("all_reduce", 1000 / 12) \
            + 2 * time_of("all_reduce", 10000 / 2)
        self.assertAlmostEqual(step, OWN + sends + 2 * MS)

    def test_accumulation_sends_in_the_last_micro_batch_only(self):
        slow = {name: (1 * MS, 0.0) for name in FITS}  # every all-reduce at 2 ranks: 2 ms
        streams, own = predict.simulate("accumulate", COMPUTE, UNITS, 2, slow, "async", accum=2)
        # two passes of 7 + 7 ms after the data; in the second, bucket 0 (units 2 and 1) from 27.5 ms
        # (unit 1 final) to 29.5, bucket 1 (unit 0, final at 28.5) to 31.5; then AdamW
        self.assertAlmostEqual(own, 0.5 * MS + 28 * MS + 2 * MS)
        self.assertAlmostEqual(streams.compute_free, 31.5 * MS + 2 * MS)
        self.assertEqual(sum(1 for track, _, _, _ in streams.slices if track == 1), 2)

    def test_buckets_send_their_units_together(self):
        slow = {name: (1 * MS, 0.0) for name in FITS}
        step, _ = step_of("bucketed", fits=slow)
        # bucket 0 (units 2 and 1) once unit 1 is final at 13.5 ms, to 15.5; bucket 1 (unit 0) 15.5 to 17.5
        self.assertAlmostEqual(step, 17.5 * MS + 2 * MS)

    def test_zero1_shards_adamw_between_its_two_collectives(self):
        step, own = step_of("zero1", ranks=4)  # a reduce-scatter and an all-gather per unit, each blocking
        self.assertAlmostEqual(own, OWN + 0.5 * MS)
        self.assertAlmostEqual(step, OWN + sum(time_of("reduce_scatter", c, 4) for _, c, _ in UNITS) + 0.5 * MS
                               + sum(time_of("all_gather", c, 4) for _, c, _ in UNITS))

    def test_zero2_blocks_in_each_hook_on_its_reduce_scatter(self):
        slow = dict(FITS, reduce_scatter=(1 * MS, 0.0))  # 1 ms each at 2 ranks
        step, _ = step_of("zero2", fits=slow)
        # each unit's backward, then its reduce-scatter before the next unit computes: three ms more
        self.assertAlmostEqual(step, OWN + 3 * MS + 1 * MS + sum(time_of("all_gather", c) for _, c, _ in UNITS))

    def test_mixed_sends_half_the_bytes_of_zero2(self):
        step16, _ = step_of("mixed")
        step32, _ = step_of("zero2")
        self.assertAlmostEqual(step32 - step16, sum(time_of(op, c) - time_of(op, c, 2, 2) for _, c, _ in UNITS
                                                     for op in ("reduce_scatter", "all_gather")))

    def test_zero3_waiting_in_calls_exposes_every_gather(self):
        step, _ = step_of("zero3", progress="calls")
        uses = [u for p, u, _ in COMPUTE["uses"] if p != "embedding"]
        uses = [u for i, u in enumerate(uses) if i == 0 or uses[i - 1] != u]  # the LM head kept into backward
        gathers = sum(time_of("all_gather", dict((u, c) for u, c, _ in UNITS)[u]) for u in uses)
        scatters = sum(time_of("reduce_scatter", c) for _, c, _ in UNITS)
        self.assertAlmostEqual(step, OWN + gathers + scatters + 1 * MS)

    def test_zero3_prefetching_hides_the_gathers_behind_compute(self):
        step, _ = step_of("zero3")
        first = time_of("all_gather", 10000)
        scatters = sum(time_of("reduce_scatter", c) for _, c, _ in UNITS)  # each blocks its hook
        self.assertAlmostEqual(step, OWN + first + scatters + 1 * MS)

    def test_zero3_prefetches_one_use_ahead_on_a_slow_link(self):
        # every all-gather 1.5 ms: the gather for use 0 from 0.5 to 2 ms, use 0 from 2 to 3 ms while the
        # next gather runs from 2 to 3.5, use 1 from 3.5 to 5.5, use 2 from 5.5 to 6.5, use 3 (waiting for
        # its gather) from 7 to 10, then 10 to 13, 13 to 14 and (its gather done at 14.5) 14.5 to 16.5, the
        # embedding's backward (no gather) to 17.5; each unit's reduce-scatter blocks its hook, and
        # unit 2's waits for the last gather (to 14.5) to leave the link; then AdamW on half
        fits = dict(FITS, all_gather=(1.5 * MS, 0.0))
        step, _ = step_of("zero3", fits=fits)
        self.assertAlmostEqual(step, 17.5 * MS + sum(time_of("reduce_scatter", c) for _, c, _ in UNITS) + 1 * MS)

    def test_model_state_follows_zeros_accounting(self):
        total = 11100
        self.assertEqual(predict.model_state_bytes("bucketed", UNITS, 4), 16 * total)
        self.assertEqual(predict.model_state_bytes("zero1", UNITS, 4), 8 * total + 2 * total)
        self.assertEqual(predict.model_state_bytes("zero2", UNITS, 4), 4 * total + 3 * total)
        self.assertEqual(predict.model_state_bytes("zero3", UNITS, 4), 4 * total)
        # lesson 10: 16-bit parameters whole, 16-bit gradients and the fp32 master, m and v sharded
        self.assertEqual(predict.model_state_bytes("mixed", UNITS, 4), 2 * total + 14 * total / 4)

    def test_memory_gives_the_zero_papers_figures(self):
        # Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models"
        # (SC 2020): GB of model state per GPU in mixed precision, DDP and ZeRO-1, -2, -3, as the
        # paper prints them (Figure 1, then rows of Table 1)
        published = [("7.5B", 64, (120, 31.4, 16.6, 1.9)), ("7.5B", 4, (120, 52.5, 41.3, 30)),
                     ("128B", 16, (2048, 608, 368, 128)), ("1T", 4, (16000, 7000, 5500, 4000))]
        for params, ranks, gigabytes in published:
            status, out, err = run_tool("memory", "--params", params, "--ranks", str(ranks), "--format", "16-bit")
            self.assertEqual(status, 0, err)
            row = next(csv.DictReader(out.splitlines()))
            for column, paper in zip(("ddp_gb", "zero1_gb", "zero2_gb", "zero3_gb"), gigabytes):
                # to the paper's rounding: half a unit of its last printed digit
                digits = len(str(paper).split(".")[1]) if "." in str(paper) else 0
                self.assertAlmostEqual(float(row[column]), paper, delta=0.5 * 10 ** -digits + 1e-9,
                                       msg=f"{params} {ranks} {column}")

    def test_bad_memory_input_is_one_line_and_status_2(self):
        for args, words in [(["--params", "7.5X"], "not a parameter count"), (["--params", "0"], "at least one"),
                            (["--params", "1B", "--ranks", "0"], "1 or more"),
                            (["--params", "1B", "--format", "fp8"], "invalid choice"),
                            (["--params", "inf"], "not a parameter count"), (["--params", "nan"], "not a parameter count")]:
            status, out, err = run_tool("memory", *args)
            self.assertEqual(status, 2, args)
            self.assertIn(words, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)


class Progress(unittest.TestCase):
    """How a started collective moves under MPI: a chain of steps, one taken at each call."""

    def test_a_chain_gives_known_waits(self):
        one = predict.chain_steps(((1, 1), (0, 0)))  # a message answered, then all the bytes
        self.assertEqual(one, [0.0, 1.0])
        # after 1.5 of compute: no test, or one at its end, leaves it all to the wait; a test
        # half way takes the handshake's answer there, and the bytes move from then on
        self.assertAlmostEqual(predict.predicted_wait(one, 1.5, 0), 1.0)
        self.assertAlmostEqual(predict.predicted_wait(one, 1.5, 1), 1.0)
        self.assertAlmostEqual(predict.predicted_wait(one, 1.5, 2), 0.25)
        self.assertAlmostEqual(predict.predicted_wait(one, 1.5, 4), 0.0)
        two = predict.chain_steps(((0, 2), (2, 2)))
        self.assertEqual(two, [0.25, 0.25, 0.0, 0.0, 0.25, 0.25])
        # tests every 0.1875: a part at 0 (to 0.25), the next at the call at 0.375 (to 0.625), the
        # two handshakes at 0.75 and 0.9375, parts at 1.125 (to 1.375) and 1.5; the wait: 0.25
        self.assertAlmostEqual(predict.predicted_wait(two, 1.5, 8), 0.25)

    def test_a_fit_recovers_the_chain_it_was_made_from(self):
        for chain in [((0, 1), (0, 0)), ((2, 1), (4, 1)), ((1, 2), (2, 6)), ((0, 3), (2, 5))]:
            steps = predict.chain_steps(chain)
            rows = [(1e-3, m * 1e-3, tests, predict.predicted_wait(steps, m, tests) * 1e-3, 0.0)
                    for m in (1.5, 3.0) for tests in (0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32)]
            fitted, worst = predict.fit_chain(rows)
            self.assertEqual(predict.chain_steps(fitted), steps, chain)
            self.assertLess(worst, 1e-12)

    def test_the_time_inside_the_calls_is_fitted_from_the_tests(self):
        # a 1 ms collective: 0.6 ms taken off the wait by 4 tests that took 0.3 ms, 1 ms by 8 that
        # took 0.5 ms; rows without tests say nothing of it
        rows = [(1e-3, 3e-3, 0, 1e-3, 0.0), (1e-3, 3e-3, 4, 0.4e-3, 0.3e-3), (1e-3, 3e-3, 8, 0.0, 0.5e-3)]
        self.assertAlmostEqual(predict.fit_in_call(rows), 0.5)
        self.assertEqual(predict.fit_in_call(rows[:1]), 0.0)
        # tests slower than the collective alone (cold caches) count as the whole of it
        self.assertEqual(predict.fit_in_call([(1e-3, 3e-3, 8, 0.0, 1.5e-3)]), 1.0)

    def test_the_chain_of_the_nearest_size_is_used(self):
        chains = {("all_reduce", 2): [(1 << 16, ((0, 1), (0, 0)), 0.25), (1 << 22, ((2, 1), (4, 1)), 0.5)]}
        self.assertEqual(predict.chain_for(chains, "all_reduce", 2, 100 << 10), ([1.0], 0.25))
        steps, in_call = predict.chain_for(chains, "all_reduce", 2, 3 << 20)
        self.assertEqual((len(steps), in_call), (8, 0.5))
        with self.assertRaises(predict.Refusal):
            predict.chain_for(chains, "all_gather", 2, 1 << 20)

    def test_overlap_takes_a_step_at_each_start(self):
        slow = {name: (1 * MS, 0.0) for name in FITS}  # every all-reduce at 2 ranks: 2 ms
        # units final at 11.5, 13.5 and 14.5 ms, each all-reduce a handshake, then its bytes: the
        # first's handshake at its start, its bytes at the second's start (13.5 to 15.5), where
        # the second's handshake is taken too; its bytes at the third's start, after the
        # first's on the link (15.5 to 17.5); the third's in the wait (17.5 to 19.5); AdamW
        chains = {("all_reduce", 2): [(1 << 20, ((1, 1), (0, 0)), 0.0)]}
        streams, _ = predict.simulate("overlap", COMPUTE, UNITS, 2, slow, "tests", chains=chains)
        self.assertAlmostEqual(streams.compute_free, 19.5 * MS + 2 * MS)
        self.assertAlmostEqual(sum(e - s for track, s, e, _ in streams.slices if track == 1), 6 * MS)
        # bytes that move from the start, as they would on a stream of their own: as async
        chains = {("all_reduce", 2): [(1 << 20, ((0, 1), (0, 0)), 0.0)]}
        streams, _ = predict.simulate("overlap", COMPUTE, UNITS, 2, slow, "tests", chains=chains)
        self.assertAlmostEqual(streams.compute_free, step_of("overlap", fits=slow)[0])

    def test_a_part_moved_inside_a_call_holds_the_compute(self):
        # one all-reduce of 2 ms, all its bytes at its start, started at 1 ms and waited for at 10:
        # a quarter of a part inside the call holds the compute 0.5 ms; all of it (shared memory),
        # 2 ms; the bytes end when they would beside the compute
        for in_call, held in ((0.25, 0.5), (1.0, 2.0)):
            streams = predict.Streams({"all_reduce": (1 * MS, 0.0)}, 2,
                                      {("all_reduce", 2): [(1 << 20, ((0, 1), (0, 0)), in_call)]})
            streams.compute("backward", 1 * MS)
            self.assertIsNone(streams.collective("all_reduce", 1 << 20, 1 * MS, False))
            self.assertAlmostEqual(streams.compute_free, (1 + held) * MS)
            self.assertAlmostEqual(streams.wait(10 * MS), 3 * MS)

    def test_a_call_takes_a_step_of_every_collective_in_flight(self):
        # three all-reduces of 2 ms, each a handshake then its bytes, started at 0, 1 and 4 ms and
        # waited for at 10: the first's handshake at 0, its bytes at the call at 1 (1 to 3) while
        # the second's handshake is taken there too; at 4 the second's bytes (4 to 6) and the
        # third's handshake; the third's bytes in the wait (10 to 12)
        streams = predict.Streams({"all_reduce": (1 * MS, 0.0)}, 2,
                                  {("all_reduce", 2): [(1 << 20, ((1, 1), (0, 0)), 0.0)]})
        for issued in (0.0, 1 * MS, 4 * MS):
            self.assertIsNone(streams.collective("all_reduce", 1 << 20, issued, False))
        self.assertAlmostEqual(streams.wait(10 * MS), 12 * MS)
        moving = sorted((round(s / MS, 9), round(e / MS, 9)) for track, s, e, _ in streams.slices if track == 1)
        self.assertEqual(moving, [(1.0, 3.0), (4.0, 6.0), (10.0, 12.0)])

    def test_tests_lie_between_async_and_calls(self):
        slow = {name: (1 * MS, 0.0) for name in FITS}
        for in_call in (0.0, 0.5, 1.0):
            chains = {(name, 2): [(1 << 20, ((2, 1), (4, 1)), in_call)] for name in ("all_reduce", "all_gather")}
            self.check_bounds(slow, chains)

    def check_bounds(self, slow, chains):
        for strategy in ("overlap", "bucketed", "zero3"):
            tests, _ = predict.simulate(strategy, COMPUTE, UNITS, 2, slow, "tests", chains=chains)
            self.assertLessEqual(step_of(strategy, fits=slow)[0], tests.compute_free + 1e-12, strategy)
            self.assertLessEqual(tests.compute_free, step_of(strategy, fits=slow, progress="calls")[0] + 1e-12,
                                 strategy)


class Bucket(unittest.TestCase):
    """A shaped link's token bucket: bytes sent while it holds tokens cost what they do without
    the shaping; it fills at its rate only while the link is idle, so back to back the link
    costs what lesson 01 measured."""
    FITS = {"all_reduce": (0.0, 1e-6)}  # 1 ms a KB: at 2 ranks an all-reduce sends its size once
    BUCKET = (1000.0, 1e6)  # a KB, filled in 1 ms

    def streams(self, unshaped_beta, chains=None):
        return predict.Streams(self.FITS, 2, chains, self.BUCKET + ({"all_reduce": (0.0, unshaped_beta)},))

    def test_the_bucket_holds_a_kb_and_fills_only_while_idle(self):
        streams = self.streams(0.25e-6)
        first = streams.collective("all_reduce", 1000, 0.0, True)
        self.assertAlmostEqual(first, 0.25 * MS)  # a full bucket: every byte at a quarter of the cost
        second = streams.collective("all_reduce", 1000, first, True)
        self.assertAlmostEqual(second - first, 1 * MS)  # back to back: empty, the fitted cost
        third = streams.collective("all_reduce", 1000, second + 0.5 * MS, True)
        self.assertAlmostEqual(third - second - 0.5 * MS, 0.5 * 0.25 * MS + 0.5 * MS)  # half filled
        fourth = streams.collective("all_reduce", 1000, third + 10 * MS, True)
        self.assertAlmostEqual(fourth - third - 10 * MS, 0.25 * MS)  # full, and no fuller

    def test_a_link_slower_without_shaping_saves_nothing(self):
        streams = self.streams(2e-6)
        self.assertAlmostEqual(streams.collective("all_reduce", 1000, 0.0, True), 1 * MS)

    def test_a_started_collectives_parts_use_the_bucket(self):
        chains = {("all_reduce", 2): [(1 << 20, ((0, 1), (0, 0)), 0.0)]}  # every byte at its start
        streams = self.streams(0.25e-6, chains)
        self.assertIsNone(streams.collective("all_reduce", 2000, 1 * MS, False))
        self.assertAlmostEqual(streams.wait(10 * MS), 1 * MS + 0.25 * MS + 1 * MS)  # a KB with tokens, one without


def trace_text(steps):
    """A lesson 00 trace of `steps` steps, each step's slices 1 ms longer than the last."""
    events, ts = [], 0.0
    names = ["data", "forward unit 0", "forward unit 1", "forward unit 2", "forward unit 0", "backward unit 0",
             "backward unit 2", "backward unit 1", "backward embedding unit 0", "optimizer step"]
    for step in range(steps):
        start = ts
        for name in names:
            events.append({"ph": "X", "pid": 0, "tid": 0, "name": name, "ts": ts, "dur": 1000.0 * (step + 1)})
            ts += 1000.0 * (step + 1)
        events.insert(len(events) - len(names), {"ph": "X", "pid": 0, "tid": 0, "name": f"step#{step + 1}",
                                                 "ts": start, "dur": ts - start})
    return json.dumps({"traceEvents": events})


class StepTool(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        with open(os.path.join(self.dir, "rank_0.json"), "w") as f:
            f.write(trace_text(4))
        with open(os.path.join(self.dir, "plan.csv"), "w") as f:
            f.write("unit,count,bytes,bucket\n" + "".join(f"{u},{c},{4 * c},{b}\n" for u, c, b in UNITS))
        with open(os.path.join(self.dir, "links.csv"), "w") as f:
            f.write(csv_text(rows("all_reduce", 2) + rows("reduce_scatter", 2) + rows("all_gather", 2)))

    def tearDown(self):
        for name in os.listdir(self.dir):
            os.remove(os.path.join(self.dir, name))
        os.rmdir(self.dir)

    def test_the_compute_is_the_median_of_the_steps_after_the_first(self):
        compute = predict.read_compute(self.dir)  # steps 2, 3, 4: 2, 3 and 4 ms a slice
        self.assertAlmostEqual(compute["data"], 3 * MS)
        self.assertAlmostEqual(compute["optimizer"], 3 * MS)
        self.assertEqual([(p, u) for p, u, _ in compute["uses"]], [(p, u) for p, u, _ in COMPUTE["uses"]])
        self.assertTrue(all(abs(d - 3 * MS) < 1e-12 for _, _, d in compute["uses"]))

    def test_of_several_traces_the_slowest_is_the_steps(self):
        slower, other = tempfile.mkdtemp(), tempfile.mkdtemp()
        try:
            with open(os.path.join(slower, "rank_0.json"), "w") as f:
                f.write(trace_text(6))  # steps 2-6: a median of 4 ms a slice, against 3
            with open(os.path.join(other, "rank_0.json"), "w") as f:
                f.write(trace_text(4).replace("forward unit 2", "forward unit 3"))
            plan, links = os.path.join(self.dir, "plan.csv"), os.path.join(self.dir, "links.csv")
            step = ["step", "flat", "--ranks", "2", "--units", plan, "--links", links]
            for traces in ([self.dir, slower], [slower, self.dir]):
                status, out, err = run_tool(*step, *[flag for t in traces for flag in ("--trace", t)])
                self.assertEqual(status, 0, err)
                self.assertIn("step %.3f ms" % (4 * 10 + 1e3 * time_of("all_reduce", 11100)), out)
            status, out, err = run_tool(*step, "--trace", self.dir, "--trace", other)
            self.assertEqual((status, out), (2, ""))
            self.assertIn("do not run the same units", err)
        finally:
            for directory in (slower, other):
                os.remove(os.path.join(directory, "rank_0.json"))
                os.rmdir(directory)

    def test_step_prints_the_step_its_parts_and_the_timeline(self):
        timeline = os.path.join(self.dir, "timeline.csv")
        status, out, err = run_tool("step", "flat", "--ranks", "2", "--trace", self.dir, "--units",
                                    os.path.join(self.dir, "plan.csv"), "--links", os.path.join(self.dir, "links.csv"),
                                    "--tokens", "1024", "--timeline", timeline)
        self.assertEqual(status, 0, err)
        expected = 3 * 10 + 1e3 * time_of("all_reduce", 11100)
        self.assertIn("step %.3f ms" % expected, out)
        self.assertIn("tokens/s %.0f" % (2 * 1024 / (expected / 1e3)), out)
        with open(timeline) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "rank,track,start_ms,end_ms,name")
        self.assertIn("0,1,", "\n".join(lines))
        prediction = os.path.join(self.dir, "prediction.csv")
        status, _, err = run_tool("step", "flat", "--ranks", "2", "--trace", self.dir, "--units",
                                  os.path.join(self.dir, "plan.csv"), "--links", os.path.join(self.dir, "links.csv"),
                                  "--tokens", "1024", "--timeline", timeline, "--csv", prediction)
        self.assertEqual(status, 0, err)  # an output is replaced whole
        with open(prediction) as f:
            row = next(csv.DictReader(f))
        self.assertEqual((row["strategy"], row["lesson"], row["ranks"]), ("flat", "03", "2"))
        self.assertAlmostEqual(float(row["step_ms"]), expected, places=3)
        self.assertAlmostEqual(float(row["exposed_ms"]), 1e3 * time_of("all_reduce", 11100), places=3)
        status, out, err = run_tool("step", "flat", "--ranks", "2", "--trace", self.dir, "--units",
                                    os.path.join(self.dir, "plan.csv"), "--links", os.path.join(self.dir, "links.csv"),
                                    "--csv", os.path.join(self.dir, "plan.csv"))
        self.assertEqual((status, out), (2, ""))  # refused before any work
        self.assertIn("is one of this step's inputs", err)

    def test_of_several_runs_of_lesson_01_each_rows_median_is_fitted(self):
        measured = rows("all_reduce", 2) + rows("reduce_scatter", 2) + rows("all_gather", 2)
        runs = []
        for k, slower in enumerate((1.0, 3.0, 1.0)):  # one run three times as slow, on every row
            runs.append(os.path.join(self.dir, f"links_{k}.csv"))
            with open(runs[-1], "w") as f:
                f.write(csv_text([(c, n, size, t * slower) for c, n, size, t in measured]))
        step = ["step", "flat", "--ranks", "2", "--trace", self.dir, "--units", os.path.join(self.dir, "plan.csv")]
        status, out, err = run_tool(*step, *[flag for path in runs for flag in ("--links", path)])
        self.assertEqual(status, 0, err)
        self.assertIn("step %.3f ms" % (3 * 10 + 1e3 * time_of("all_reduce", 11100)), out)
        status, out, err = run_tool(*step, "--links", runs[1])
        self.assertIn("step %.3f ms" % (3 * 10 + 3e3 * time_of("all_reduce", 11100)), out)

    def test_of_several_progress_runs_the_chains_are_fitted_to_all_rows(self):
        first = self.write_progress(((2, 1), (4, 1)))
        second = os.path.join(self.dir, "progress_2.csv")
        os.rename(first, second)
        first = self.write_progress(((0, 1), (0, 0)))
        merged = predict.read_progress_runs([first, second], None)
        for key, rows in merged.items():
            self.assertEqual(sorted(rows), sorted(predict.read_progress(first, None)[key]
                                                  + predict.read_progress(second, None)[key]))
        step = ["step", "overlap", "--ranks", "2", "--trace", self.dir, "--units", os.path.join(self.dir, "plan.csv"),
                "--links", os.path.join(self.dir, "links.csv"), "--progress", "tests"]
        status, out, err = run_tool(*step, "--progress-rows", first, "--progress-rows", second)
        self.assertEqual(status, 0, err)
        self.assertIn("progress tests", out)

    def test_a_bucket_saves_what_its_bytes_cost_past_the_shaping(self):
        unshaped = os.path.join(self.dir, "unshaped.csv")
        with open(unshaped, "w") as f:
            f.write(csv_text([(c, n, size, predict.seconds(c, n, size, ALPHA, BETA / 4)) for c, n, size, _ in
                              rows("all_reduce", 2) + rows("reduce_scatter", 2) + rows("all_gather", 2)]))
        step = ["step", "flat", "--ranks", "2", "--trace", self.dir, "--units", os.path.join(self.dir, "plan.csv"),
                "--links", os.path.join(self.dir, "links.csv")]
        # flat's one all-reduce after a backward pass that left the link idle: its first 10 KB
        # of the 44,400 bytes it sends cost a quarter
        status, out, err = run_tool(*step, "--bucket", "10K,8", "--unshaped-links", unshaped)
        self.assertEqual(status, 0, err)
        saved = 10240 * 0.75 * BETA
        self.assertIn("step %.3f ms" % (3 * 10 + 1e3 * (time_of("all_reduce", 11100) - saved)), out)
        status, out, err = run_tool(*step, "--bucket", "10K,8", "--unshaped-links", os.path.join(self.dir, "links.csv"))
        self.assertIn("step %.3f ms" % (3 * 10 + 1e3 * time_of("all_reduce", 11100)), out)  # no faster without it

    def write_progress(self, chain, in_call=0.0):
        """Lesson 01 --progress rows made from `chain`, as 01_collectives --csv writes them, the
        tests taking `in_call` of what they take off the wait."""
        steps, path = predict.chain_steps(chain), os.path.join(self.dir, "progress.csv")
        with open(path, "w") as f:
            f.write(",".join(predict.PROGRESS_COLUMNS) + "\n")
            for name in ("all_reduce", "all_gather"):
                for m in (1.5, 3.0):
                    for tests in (0, 1, 2, 4, 8, 16, 32):
                        wait = 1000 * predict.predicted_wait(steps, m, tests)
                        in_tests = in_call * (1000 - wait) if tests else 0.0
                        f.write(f"mpi,2,{name},65536,1000.000,{1000 * m:.3f},{tests},{wait:.3f},{in_tests:.3f}\n")
        return path

    def test_progress_prints_the_fitted_chain_and_step_uses_it(self):
        progress = self.write_progress(((2, 1), (4, 1)), in_call=0.3)
        status, out, err = run_tool("progress", progress)
        self.assertEqual(status, 0, err)
        self.assertIn("2 calls, then 1 part; 4 calls, then 1 part", out)
        self.assertEqual([line.split()[-1] for line in out.splitlines()[1:]], ["30%", "30%"])
        self.assertEqual(len(out.splitlines()), 3)  # a header, then all_gather and all_reduce at 64 KB
        steps = {}
        for progress_flag in ("async", "calls", "tests"):
            extra = ["--progress-rows", progress] if progress_flag == "tests" else []
            status, out, err = run_tool("step", "overlap", "--ranks", "2", "--trace", self.dir, "--units",
                                        os.path.join(self.dir, "plan.csv"), "--links",
                                        os.path.join(self.dir, "links.csv"), "--progress", progress_flag, *extra)
            self.assertEqual(status, 0, err)
            steps[progress_flag] = float(out.splitlines()[1].split()[1])
        self.assertLessEqual(steps["async"], steps["tests"])
        self.assertLessEqual(steps["tests"], steps["calls"])

    def test_a_trace_the_model_cannot_read_is_one_line_and_status_2(self):
        plan, links = os.path.join(self.dir, "plan.csv"), os.path.join(self.dir, "links.csv")
        good = trace_text(4)
        for text, words in [(good.replace('"forward unit 2"', '"forward unit x"'), "does not know"),
                            (good.replace('"dur": 2000.0', '"dur": "2000"'), "a slice without a time"),
                            (good.replace('"backward unit', '"forward unit'), "no backward slices")]:
            with open(os.path.join(self.dir, "rank_0.json"), "w") as f:
                f.write(text)
            status, out, err = run_tool("step", "flat", "--ranks", "2", "--trace", self.dir, "--units", plan,
                                        "--links", links)
            self.assertEqual((status, out), (2, ""), words)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn(words, err)

    def test_bad_progress_input_is_one_line_and_status_2(self):
        plan, links = os.path.join(self.dir, "plan.csv"), os.path.join(self.dir, "links.csv")
        step = ["step", "overlap", "--ranks", "2", "--trace", self.dir, "--units", plan, "--links", links]
        progress = self.write_progress(((0, 1), (0, 0)))
        zero_size = os.path.join(self.dir, "zero.csv")
        with open(progress) as f, open(zero_size, "w") as out:
            out.write(f.read().replace(",65536,", ",0,"))
        for args, words in [(step + ["--progress", "tests"], "go together"),
                            (step + ["--progress-rows", progress], "go together"),
                            (step + ["--progress", "tests", "--progress-rows", links], "no column alone_us"),
                            (["progress", links], "no column alone_us"),
                            (["progress", "/nonexistent"], "cannot read"),
                            (["progress", zero_size], "a size above 0"),
                            (step + ["--ranks", "4", "--progress", "tests", "--progress-rows", progress],
                             "no --progress rows of all_reduce at 4 ranks")]:
            status, out, err = run_tool(*args)
            self.assertEqual((status, out), (2, ""), args)
            self.assertIn(words, err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_a_collective_the_step_does_not_send_is_not_fitted(self):
        links = os.path.join(self.dir, "with_broadcast.csv")
        with open(links, "w") as f:  # a broadcast measured at one size: no fit, and none needed
            f.write(csv_text(rows("all_reduce", 2) + rows("reduce_scatter", 2) + rows("all_gather", 2)
                             + [("broadcast", 2, 1024, 1e-5), ("broadcast", 2, 1024, 2e-5)]))
        status, out, err = run_tool("step", "flat", "--ranks", "2", "--trace", self.dir, "--units",
                                    os.path.join(self.dir, "plan.csv"), "--links", links)
        self.assertEqual(status, 0, err)
        self.assertIn("step %.3f ms" % (3 * 10 + 1e3 * time_of("all_reduce", 11100)), out)

    def test_bad_step_input_is_one_line_and_status_2(self):
        plan, links = os.path.join(self.dir, "plan.csv"), os.path.join(self.dir, "links.csv")
        out_file, nccl = os.path.join(self.dir, "out.csv"), os.path.join(self.dir, "nccl.csv")
        with open(nccl, "w") as f:  # another backend's run: its rows are not the same link's
            f.write(csv_text(rows("all_reduce", 2) + rows("reduce_scatter", 2) + rows("all_gather", 2), "nccl"))
        for args, words in [(["--accum", "2", "--trace", self.dir, "--units", plan, "--links", links], "--accum"),
                            (["--trace", "/nonexistent", "--units", plan, "--links", links], "cannot read"),
                            (["--trace", self.dir, "--units", links, "--links", links], "no columns unit"),
                            (["--trace", self.dir, "--units", plan, "--links", plan], "no column backend"),
                            (["--ranks", "1", "--trace", self.dir, "--units", plan, "--links", links], "2 or more"),
                            (["--trace", self.dir, "--units", plan, "--links", links, "--bucket", "64K"], "BYTES,GBIT"),
                            (["--trace", self.dir, "--units", plan, "--links", links, "--bucket", "64K,1"],
                             "go together"),
                            (["--trace", self.dir, "--units", plan, "--links", links, "--tokens", "-512"], "--tokens"),
                            (["--trace", self.dir, "--units", plan, "--links", links, "--csv", out_file,
                              "--timeline", out_file], "one would be lost"),
                            (["--trace", self.dir, "--units", plan, "--links", links, "--links", nccl],
                             "several backends")]:
            argv = ["step", "overlap"] + (["--ranks", "2"] if "--ranks" not in args else []) + args
            status, out, err = run_tool(*argv)
            self.assertEqual((status, out), (2, ""), args)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn(words, err)


# ---------------------------------------------------------------- carried to scale

SMALL = [(3, 32, 0), (2, 3280, 1), (1, 3280, 2), (0, 1000, 3)]  # C = 16: a block is 12 C^2 + 13 C = 3280
SMALL_FLOPS = 3 * (2 * (2 * 3280 + 4 * 10 * 16) + 2 * 1000)  # per token: forward and twice it backward


class Scale(unittest.TestCase):
    def test_the_shape_comes_from_a_block(self):
        self.assertEqual(predict.shape_of(SMALL), (16, 2))
        with self.assertRaises(predict.Refusal):
            predict.shape_of([(3, 32, 0), (2, 3281, 1), (1, 3281, 2), (0, 1000, 3)])

    def test_stated_compute_is_flops_over_the_rate_and_adamw_bytes_over_memory(self):
        compute = predict.stated_compute(SMALL, 100, 10, 1e12, 2e9)
        self.assertAlmostEqual(sum(d for _, _, d in compute["uses"]), 100 * SMALL_FLOPS / 1e12)
        self.assertAlmostEqual(compute["optimizer"], 28 * (32 + 3280 + 3280 + 1000) / 2e9)
        self.assertEqual([(p, u) for p, u, _ in compute["uses"]],
                         [("forward", 0), ("forward", 1), ("forward", 2), ("forward", 3), ("forward", 0),
                          ("backward", 0), ("backward", 3), ("backward", 2), ("backward", 1), ("embedding", 0)])

    def test_a_ring_across_nodes_is_as_slow_as_the_network(self):
        self.assertEqual(predict.stated_fits(8, 8, (400, 2), (50, 10))["all_reduce"], (2e-6, 1 / 400e9))
        alpha, beta = predict.stated_fits(16, 8, (400, 2), (50, 10))["reduce_scatter"]
        self.assertAlmostEqual(alpha, (7 * 2e-6 + 10e-6) / 8)
        self.assertAlmostEqual(beta, 1 / 50e9)

    def test_scale_prints_a_row_per_strategy_and_rank_count(self):
        with tempfile.TemporaryDirectory() as folder:
            plan = os.path.join(folder, "plan.csv")
            with open(plan, "w") as f:
                f.write("unit,count,bytes,bucket\n" + "".join(f"{u},{c},{4 * c},{b}\n" for u, c, b in SMALL))
            status, out, err = run_tool("scale", "--units", plan, "--tokens", "100", "--seq", "10", "--tflops", "1",
                                        "--memory-gbps", "2", "--node-link", "400,2", "--network", "50,10",
                                        "--ranks", "8,16", "--strategies", "flat,zero3")
        self.assertEqual(status, 0, err)
        rows = list(csv.DictReader(out.splitlines()))
        self.assertEqual([(r["strategy"], r["ranks"]) for r in rows],
                         [("flat", "8"), ("flat", "16"), ("zero3", "8"), ("zero3", "16")])
        compute = 100 * SMALL_FLOPS / 1e12 + 28 * 7592 / 2e9
        ring = predict.seconds("all_reduce", 16, 4 * 7592, (7 * 2e-6 + 10e-6) / 8, 1 / 50e9)
        self.assertAlmostEqual(float(rows[1]["step_ms"]), 1e3 * (compute + ring), places=3)
        self.assertAlmostEqual(float(rows[1]["efficiency"]), compute / (compute + ring), places=3)
        self.assertAlmostEqual(float(rows[3]["model_state_gb"]), 16 * 7592 / 16 / 1e9)

    def test_bad_scale_input_is_one_line_and_status_2(self):
        for args, words in [(["--strategies", "flat,ring"], "no strategy ring"),
                            (["--network", "50"], "GBPS,ALPHA_US"),
                            (["--ranks", "1,8"], "2 or more"),
                            (["--tflops", "0"], "above 0"), (["--tflops", "nan"], "above 0"),
                            (["--network", "inf,1"], "above 0")]:
            base = {"--units": "/nonexistent", "--tokens": "1", "--seq": "1", "--tflops": "1", "--memory-gbps": "1",
                    "--node-link": "1,1", "--network": "1,1"}
            base.update(dict(zip(args[::2], args[1::2])))
            status, out, err = run_tool("scale", *[v for pair in base.items() for v in pair])
            self.assertEqual((status, out), (2, ""), args)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn(words, err)

if __name__ == "__main__":
    unittest.main()
