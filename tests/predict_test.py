#!/usr/bin/env python3
"""tools/predict.py's link model: known alpha and beta give the model's times; rows made
from known alpha and beta are fitted back to them (exactly, and within the noise when noisy);
a fit at 2 ranks predicts 4 ranks through the model's steps and factors; bad input is
refused with one line. Run by tests/test_predict.c."""
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


if __name__ == "__main__":
    unittest.main()
