#!/usr/bin/env python3
r"""Grades lessons against the expected values in tests/expected/ and the rules they teach.

  scripts/grade.sh [NN[,NN...] [BINARY]] [--build DIR] [--device cpu|cuda] [--json FILE] [--check NAME[,NAME...]]
  scripts/grade.sh [NN[,NN...]] --list
  (make grade [LESSON=NN] [CHECK=NAME[,NAME...]] [JSON=FILE])

NN: the lesson, or a list of them (all lessons when left out; several end with one table).
BINARY defaults to the student build, DIR/lessons/NN_name (DIR: --build, default build);
its sanitizer build is the same path under DIR/sanitize/. A lesson's checks are listed in tests/expected/NN_name.checks, one per line:
  train PRESET [FLAGS]   `BINARY train --config PRESET FLAGS`: loss, grad norm and validation
                         loss per step against expected/NN_name/train_PRESET.csv, within the tolerance
  estimate PRESET [FLAGS]
                         `BINARY estimate --config PRESET FLAGS` against estimate_PRESET[_FLAGS].csv, exactly
  plan PRESET [FLAGS]    `BINARY plan --config PRESET FLAGS`: the plan your query gives (lesson 05's
                         buckets, lesson 07's shards), every column of plan_PRESET[_FLAGS].csv
                         exactly, at a unit of more elements than a 32-bit int counts
  ring N                 `mpiexec -disable-auto-cleanup -n N BINARY --verify-ring`: the ring all-reduce against exact sums,
                         and its communication log against the ring's rule (grader/check_schedule.c)
  dp PRESET N [FLAGS]    `mpiexec -disable-auto-cleanup -n N BINARY train --config PRESET FLAGS`: identical parameters on
                         every rank at the end; loss, grad norm and validation loss per step within
                         the lesson's tolerance (tests/tolerance.sh) and the bytes communicated per
                         step exactly, against
                         expected/NN_name/dp_PRESET_nN[_FLAGS].csv; and the run's communication log
                         against the lesson's schedule and memory rules
  drift PRESET N [FLAGS] the same run: loss and validation loss per step against lesson 00's fp32
                         expected/00_single_device/train_PRESET.csv, within how far a 16-bit run may
                         drift from an fp32 one (tests/tolerance.sh, DRIFT_RTOL)
  sanitize CHECK...      the run of CHECK (one of the lines above), 4 steps of it, with the
                         AddressSanitizer + UndefinedBehaviorSanitizer build: any report fails
  resume CHECK...        the run of CHECK saving its resume state after step 20 (--save-every
                         20), and a second run resumed from that state: its steps and its final
                         parameters must be the first run's, bit for bit
Every PASS/FAIL line is one check; a failed one is followed by the commands that reproduce it.
--device cuda runs every train, dp and drift check on the GPU (a CUDA build: --build
build/cuda), ranks sharing one GPU through MPI: the GPU against the CPU's expected values,
at the CPU's tolerance. Estimates and lesson 01's ring (host memory) run as they do on the
CPU, and sanitize lines are left out (the sanitizers check the CPU build).
--json FILE also writes the results in Gradescope's results.json format. --check NAME (or
CHECK=NAME) runs only the line whose name (as printed: dp_reference_n2_bucket-mb_0.1) is NAME;
a list, NAME,NAME..., the lines named in it. --list prints the names of the lessons' checks
("NN NAME", a line each) and runs nothing.
With GRADE_SANDBOX set to a scripts/sandbox.sh command (what scripts/grade_class.sh
sets), every run of the lesson happens in that sandbox, writing only into a folder of its
own; its outputs are compared outside it, and an output that is not a regular file it
wrote (a symbolic link to the expected values, say) counts as missing.
A lesson whose files in lessons/ do not compile grades as one failed check that quotes the
compiler's first error ("lesson 04: FAIL (does not compile: FILE:LINE:COL: error: ...)");
the compiler's warnings, which never fail a grade, are listed after the verdict.
Graded from your own build (no BINARY, and not in a class's sandbox), a lesson's result also
says how many of its hints you have seen (make hint): "hints seen: 1 of 3", never part of the
score. Each run starts with none of the files it writes there: what an earlier run left under
the same names is never read as its.
Exit status: 0 when every check passes, 1 when one fails, 2 on bad input.
"""
import csv
import functools
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import types

import results  # beside this file: results.json, written and read

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FIGURES = ("loss", "grad_norm", "val_loss")  # what a training check compares, each at its tolerance
# Set whole here: they override what a program compiles in (__asan_default_options), so a
# report always reaches the run's output and always fails the run.
SANITIZER_OPTIONS = {"ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1:log_path=stderr:exitcode=1",
                     "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:log_path=stderr:exitcode=1:suppressions="}
SANITIZER_KIND = re.compile(r"ERROR: AddressSanitizer: [A-Za-z-]+|runtime error: .*")
INNERMOST_FRAME = re.compile(r"^ *#0 ")
FRAME_ADDRESS = re.compile(r"^ *#0 0x[0-9a-f]* ")
# the last line of a training run: every rank's parameters the same, and their hash
FINAL_HASH = re.compile(r"^parameters identical on all [0-9]+ rank\(s\): hash ([0-9a-f]+)")
# a lesson's error, as it prints it: its name first; or the communicator's, which ends the
# job (comm_check): the call and the rank first ("all_reduce_start on rank 0: ...")
LESSON_ERROR = re.compile(r"^[0-9][0-9]_[a-z0-9_]+: |^[a-z0-9_]+ (failed )?on rank [0-9]+( of [0-9]+)?: ")
# mpiexec's banner about a rank that ended says nothing the lesson's own lines do not
NOT_THE_LESSONS = re.compile(r"^=|^$|YOUR APPLICATION TERMINATED|This typically refers to a problem"
                             r"|Please see the FAQ page")


# ---- text: a run's bytes kept as they are (a lesson may print anything), lines split at "\n"

def decode(data):
    return data.decode("utf-8", "surrogateescape")


def say(text, stream=None):
    stream = stream or sys.stdout  # flushed at once: the helper scripts we start write to the same terminal
    stream.buffer.write(text.encode("utf-8", "surrogateescape"))
    stream.buffer.flush()


def refuse(message):
    say(message + "\n", sys.stderr)
    sys.exit(2)


def read_text(path):
    with open(path, "rb") as file:
        return decode(file.read())


def lines_of(text):
    """The lines of a text: a last line without its newline still counts."""
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") or not text else lines


def failures_in_one_line(lines):
    """Each FAIL line of a check's text, whole; one that ends at a colon gets the first line of
    what follows it (the reason a run or a build gave), so that the line alone says why."""
    failures = []
    for i, line in enumerate(lines):
        if not line.startswith("FAIL "):
            continue
        reason = lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1].startswith(" ") else ""
        failures.append(f"{line} {reason}" if line.endswith(":") and reason else line)
    return failures


def file_lines(path):
    with open(path, "rb") as file:  # one at a time: a run's output can be large
        for line in file:
            yield decode(line.removesuffix(b"\n"))


def first(lines, test):
    return next((line for line in lines if test(line)), None)


def prefix_lines(text, prefix):
    """Every line of text with prefix before it, each ended: a run's last line without its
    newline must not swallow the next line printed."""
    return "".join(f"{prefix}{line}\n" for line in lines_of(text))


def ifs_words(text):
    """The words an unquoted shell expansion splits text into."""
    return [word for word in re.split(r"[ \t\n]+", text) if word]


def comma_fields(text):
    """The comma-separated fields of text's first line (a trailing comma ends a field, it does
    not start an empty one)."""
    fields = text.split("\n", 1)[0].split(",")
    return fields[:-1] if fields[-1] == "" else fields


def spaced(text):
    """A command's words with one space between each: a check line without flags leaves none
    doubled in a command a student copies."""
    return " ".join(text.split())


def word(words, index):
    return words[index] if index < len(words) else ""


def posix_dirname(path):
    stripped = path.rstrip("/")
    if "/" not in stripped:
        return "/" if path.startswith("/") else "."
    return stripped.rsplit("/", 1)[0].rstrip("/") or "/"


def setting(name, default):
    return os.environ.get(name) or default


def shell_status(returncode):
    return 128 - returncode if returncode < 0 else returncode  # a signal's, as the shell reports it


def run_tool(words, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL):
    """Runs a program: its exit status, what it printed and what it complained."""
    done = subprocess.run(words, stdin=stdin, stdout=stdout, stderr=stderr)
    return shell_status(done.returncode), decode(done.stdout or b""), decode(done.stderr or b"")


# ---- the repository's own answers

@functools.lru_cache(maxsize=None)
def lesson_folder(number):
    found = subprocess.run(["scripts/lesson_binary.sh", number], stdout=subprocess.PIPE)  # it says why not
    if found.returncode != 0:
        sys.exit(2)
    return decode(found.stdout).rstrip("\n")


def hints_seen(number):
    status, seen, _ = run_tool(["scripts/hint.sh", number, "--seen"], stderr=subprocess.DEVNULL, stdin=None)
    return (seen + ("none" if status else "")).rstrip("\n")


@functools.lru_cache(maxsize=None)
def tolerance(expression, *args):
    """What EXPRESSION prints with tests/tolerance.sh sourced: the numbers are kept there alone."""
    return run_tool(["bash", "-c", f"source tests/tolerance.sh; {expression}", "_", *args])[1].rstrip("\n")


def column_tolerance(folder, column):
    """The rtol and atol of one column of a lesson's runs."""
    return ifs_words(tolerance('column_tolerance "$1" "$2"', folder, column))


def drift_tolerance():
    return tolerance('echo "$DRIFT_RTOL"'), tolerance('echo "$LOSS_ATOL"')


def check_name(words):
    """A check's name, the name of its expected-values file: its words joined by '_', flags
    without their dashes ("dp reference 2 --accum 4" is dp_reference_n2_accum_4); dp and drift
    lines name their ranks nN; a sanitize or resume line is named after the line it runs."""
    if word(words, 0) in ("sanitize", "resume"):
        return f"{word(words, 0)}_" + check_name(words[1:])
    name, flags = f"{word(words, 0)}_{word(words, 1)}", words[2:]
    if word(words, 0) in ("dp", "drift"):
        name, flags = f"{name}_n{word(words, 2)}", words[3:]
    return name + "".join("_" + flag.removeprefix("--") for flag in flags)


# ---- running a lesson and reading what it wrote

class Transcript(list):
    """What one check prints, held until it ends: then printed, counted and kept for the JSON."""

    def line(self, text):
        self.append(text + "\n")


def student_run(grading, words, out_path, stdout_path=None, sanitized=False):
    """Runs the lesson's code, in the sandbox when GRADE_SANDBOX is set, writing into out_path
    (its standard output into stdout_path if given); returns its exit status."""
    sandbox = []
    if os.environ.get("GRADE_SANDBOX"):
        sandbox = ifs_words(os.environ["GRADE_SANDBOX"].split("\n", 1)[0]) + ["--write", grading.outputs]
        if sanitized:  # the sanitizers reserve terabytes of address space
            sandbox += ["--memory-mb", "0"]
        sandbox += ["--"]
    env = dict(os.environ, **SANITIZER_OPTIONS) if sanitized else None
    command = ["timeout", setting("GRADE_TIMEOUT", "300"), *sandbox, *words]
    out = open(out_path, "wb")
    stdout = open(stdout_path, "wb") if stdout_path else out
    with out, stdout, subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=out, env=env) as run:
        returncode = run.wait()
        out.write(signal_report(returncode).encode())
    return shell_status(returncode)


def signal_report(returncode):
    """A line for the run's output when a signal ended it, so that a lesson that crashed says
    so beside its last lines. Nothing for an interrupt or a broken pipe."""
    if returncode >= 0 or -returncode in (signal.SIGINT, signal.SIGPIPE):
        return ""
    return f"grade: the run was ended by signal {-returncode} ({signal.strsignal(-returncode)})\n"


def remove(path):
    """Whatever is at path, gone: a file, a link (not what it points at) or a folder."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.unlink(path)


def own_outputs(transcript, *paths):
    """A run's output that is not a regular file it wrote is not read: a link could point at
    the expected values. Outside the sandbox nothing can have made one."""
    for path in paths:
        if os.path.islink(path) or (os.path.exists(path) and not os.path.isfile(path)):
            transcript.line(f"  (the run's {os.path.basename(path)} is not a regular file it wrote: not read)")
            remove(path)


def final_hash(out_path):
    """The hash of the final parameters a run's output printed, or None."""
    line = first(file_lines(out_path), FINAL_HASH.search) if os.path.isfile(out_path) else None
    return FINAL_HASH.search(line).group(1) if line else None


def nonempty(path):
    return os.path.exists(path) and os.path.getsize(path) > 0


def own_last_lines(path, count=6):
    """The last lines a failed run wrote itself, indented; the lesson's own error lines
    ("08_zero2: ranks ended with ...", "all_reduce_start on rank 0: ...") first, whatever it
    printed after them."""
    own = [line for line in file_lines(path) if not NOT_THE_LESSONS.search(line)]
    errors = [line for line in own if LESSON_ERROR.match(line)][-count:]
    rest = [line for line in own if not LESSON_ERROR.match(line)][-(count - len(errors)):] if len(errors) < count else []
    return "".join(f"  {line}\n" for line in errors + rest)


def timed_out(status):
    return " (timed out)" if status == 124 else ""


def run_verdict(transcript, name, status, out_path, passed):
    """The run itself, as one check: PASS when it exits 0, else FAIL with its last lines."""
    if status == 0:
        transcript.line(f"PASS {name} run: {passed}")
        return True
    transcript.line(f"FAIL {name} run: the lesson exited with an error{timed_out(status)}:")
    transcript.append(own_last_lines(out_path))
    return False


def first_line(text):
    return (lines_of(text) or [""])[0]


def compare_columns(transcript, expected, actual, label, columns, rtol, atol, *extra):
    """A run's CSV against the expected values: one PASS/FAIL line a column, also when the run
    wrote nothing (each column then fails, saying so)."""
    why = "no figures (the run ended before writing them)"
    if nonempty(actual):
        status, printed, complaint = run_tool(["build/tools/compare_runs", expected, actual, "--label", label,
                                               "--columns", columns, "--rtol", rtol, "--atol", atol, *extra])
        transcript.append(printed)
        if status != 2:
            return status == 0
        why = f"could not compare: {first_line(complaint)}"
    transcript.extend(f"FAIL {label} {column}: {why}\n" for column in ifs_words(columns.replace(",", " ")))
    return False


def compare_figures(transcript, expected, actual, name, folder):
    return all([compare_columns(transcript, expected, actual, name, column, *column_tolerance(folder, column))
                for column in FIGURES])


def figure_commands(expected, folder):
    return [f"    build/tools/compare_runs {expected} run.csv --columns {column} --rtol {rtol} --atol {atol}"
            for column in FIGURES for rtol, atol in [column_tolerance(folder, column)]]


def schedule(transcript, number, log, label, why, flags):
    """The communication log against the lesson's rules; every rule fails, saying why, without one."""
    check_schedule = ["build/tools/check_schedule", number, log, "--label", label]
    if nonempty(log):
        status, printed, complaint = run_tool(check_schedule + flags)
        transcript.append(printed)
        if status != 2:
            return status == 0
        why = f"the log could not be read: {first_line(complaint)}"
    else:
        why = f"no communication log: {why}"
    status, printed, _ = run_tool(check_schedule + ["--no-log", why] + flags, stderr=subprocess.STDOUT)
    transcript.append(printed)
    return status == 0


def plan_columns(expected):
    """The columns a plan check compares: every one of the expected file's after the first (the
    unit); None when there is no such file."""
    try:
        with open(expected, newline="", encoding="utf-8", errors="surrogateescape") as file:
            return ",".join(next(csv.reader(file), [])[1:])
    except OSError:
        return None


def sanitizer_build(binary):
    """The sanitizer build of a lesson binary: .../build/X -> .../build/sanitize/X."""
    if binary.startswith("build/"):
        return "build/sanitize/" + binary.removeprefix("build/")
    before, found, after = binary.rpartition("/build/")
    return f"{before}/build/sanitize/{after}" if found else binary


def exercise_files(folder):
    """A lesson's exercise files; a course handed out without the reference has them only in lessons/."""
    where = f"solutions/{folder}" if glob.glob(glob.escape(f"solutions/{folder}") + "/*.c") else f"lessons/{folder}"
    return sorted(name for name in os.listdir(where) if name.endswith(".c") and not name.startswith("."))


def sanitizer_finding(log, folder):
    """The first sanitizer report in the log, as one line naming where it happened; None without one.
    It is traced back to the first frame in an exercise file."""
    kind_line = first(file_lines(log), SANITIZER_KIND.search)
    if kind_line is None:
        return None
    kind = "\n".join(match.group(0) for match in SANITIZER_KIND.finditer(kind_line))
    files = "(" + "|".join(map(re.escape, exercise_files(folder))) + ")"
    frame_line = first(file_lines(log), re.compile(f"(^|/){files}:[0-9]+").search)
    where = re.search(f"in [^ ]+ [^ ]*{files}:[0-9]+|[^ ]*{files}:[0-9]+(:[0-9]+)?", frame_line or "")
    frame = where.group(0) if where else ""
    if not frame:
        innermost = first(file_lines(log), INNERMOST_FRAME.search)
        frame = "" if innermost is None else FRAME_ADDRESS.sub("", innermost, count=1)
    return f"{kind.removeprefix('ERROR: ')}, {frame or 'no frame'}"


# ---- the kinds of check, one class each, chosen by the check line's first word

class Check:
    """A line of a lesson's .checks file: the command it runs, what it compares, and how to
    redo it by hand. run() writes the same number of PASS/FAIL lines whatever happens and
    says whether all of them passed."""
    passed_run = "exited normally"

    def __init__(self, words, lesson):
        self.words, self.lesson = words, lesson
        self.mode, self.preset, self.name = word(words, 0), word(words, 1), check_name(words)
        self.expected = f"tests/expected/{lesson.folder}/{self.name}.csv"
        self.actual = f"{lesson.grading.outputs}/{self.name}.csv"
        self.log = f"{lesson.grading.outputs}/{self.name}.log.csv"
        self.out = f"{lesson.grading.work}/{self.name}.out"

    def command(self, binary):
        """The command that runs the line with binary, as text: the shell splits it into words."""
        return ""

    def start(self, *added, stdout_path=None):
        # what an earlier run left under these names (another lesson's check of the same
        # name, or a link a run made) is never read as this run's
        remove(self.actual)
        remove(self.log)
        words = ifs_words(self.command(self.lesson.binary)) + list(added)
        return student_run(self.lesson.grading, words, self.out, stdout_path)

    def run(self, transcript):
        status = self.start("--csv", self.actual)
        passed = run_verdict(transcript, self.name, status, self.out, self.passed_run)
        own_outputs(transcript, self.actual)
        return all([passed, *self.compare(transcript)])

    def compare(self, transcript):
        """The comparisons of the run's outputs, each a bool, all of them made."""
        return [compare_figures(transcript, self.expected, self.actual, self.name, self.lesson.folder)]

    def reproduce(self):
        """The commands that redo a failed check by hand."""
        return [f"    {self.command(self.lesson.binary)} --csv run.csv",
                *figure_commands(self.expected, self.lesson.folder)]


class Unknown(Check):
    """A line whose first word grade does not know: one failed check."""

    def run(self, transcript):
        transcript.line(f"FAIL {self.name}: grade does not know the check '{self.mode}' "
                        f"(tests/expected/{self.lesson.folder}.checks)")
        return False

    def reproduce(self):
        return []


class Train(Check):
    def command(self, binary):
        flags = " ".join(self.words[2:])
        return spaced(f"{binary} train --config {self.preset} {flags}{self.lesson.grading.device_flags()}")


class Estimate(Check):
    def __init__(self, words, lesson):
        super().__init__(words, lesson)
        # the grader writes the run's standard output itself: where the run cannot reach
        self.actual = f"{lesson.grading.work}/{self.name}.csv"

    def command(self, binary):
        return spaced(f"{binary} estimate --config {self.preset} {' '.join(self.words[2:])}")

    def run(self, transcript):
        status = self.start(stdout_path=self.actual)
        passed = run_verdict(transcript, self.name, status, self.out, self.passed_run)
        return all([passed, compare_columns(transcript, self.expected, self.actual, self.name, "bytes", "0", "0")])

    def reproduce(self):
        return [f"    {self.command(self.lesson.binary)} > estimate.csv",
                f"    build/tools/compare_runs {self.expected} estimate.csv --columns bytes --rtol 0 --atol 0"]


class Plan(Check):
    def command(self, binary):
        return spaced(f"{binary} plan --config {self.preset} {' '.join(self.words[2:])}")

    def compare(self, transcript):
        columns = plan_columns(self.expected)
        if columns is None:
            transcript.line(f"FAIL {self.name}: no expected values in {self.expected}")
            return [False]
        return [compare_columns(transcript, self.expected, self.actual, self.name, columns, "0", "0")]

    def reproduce(self):
        columns = plan_columns(self.expected) or "?"
        return [f"    {self.command(self.lesson.binary)} --csv plan.csv",
                f"    build/tools/compare_runs {self.expected} plan.csv --columns {columns} --rtol 0 --atol 0"]


RING_COUNTS = 8  # the uneven counts `--verify-ring` tries (lessons/01_collectives/bench.c)


def ring_counts(out):
    """How many counts a `--verify-ring` run found exact, and how many it got through (a line each)."""
    exact = checked = 0
    for line in file_lines(out):
        exact += line.startswith("PASS ring all-reduce")
        checked += line.startswith(("PASS ring all-reduce", "FAIL ring all-reduce"))
    return exact, checked


class Ring(Check):
    def command(self, binary):
        return f"mpiexec -disable-auto-cleanup -n {self.preset} {binary} --verify-ring"

    def schedule_flags(self):
        return f"--ranks {self.preset}"

    def run(self, transcript):
        status = self.start("--comm-log", self.log)
        own_outputs(transcript, self.log)
        exact, checked = ring_counts(self.out)
        if status == 0:
            transcript.line(f"PASS {self.name} sums: exact on all {exact} uneven counts")
        elif checked < RING_COUNTS:  # the run ended in the middle: the counts after it were never tried
            transcript.line(f"FAIL {self.name} sums: {exact} of {RING_COUNTS} counts exact, then the run ended with "
                            f"an error in count {checked + 1}{timed_out(status)} (its output below)")
        else:
            transcript.line(f"FAIL {self.name} sums: {exact} of {RING_COUNTS} counts exact{timed_out(status)}")
        transcript.append(prefix_lines(read_text(self.out), "  "))
        return all([status == 0, schedule(transcript, self.lesson.number, self.log, self.name,
                                          "the program ended before writing it", ifs_words(self.schedule_flags()))])

    def reproduce(self):
        return [f"    {self.command(self.lesson.binary)} --comm-log run_log.csv",
                f"    build/tools/check_schedule {self.lesson.number} run_log.csv {self.schedule_flags()}"]


class DataParallel(Check):
    passed_run = "exited normally, with identical parameters on every rank"

    def command(self, binary):
        return mpi_training(self, binary)

    def schedule_flags(self):
        return spaced(f"--ranks {word(self.words, 2)} --config {self.preset} {' '.join(self.words[3:])}")

    def bytes_flags(self):
        """What a step may move beside the reference's bytes: after a validation, what it kept or
        gathered again; on ZeRO-3 (lesson 09, lesson 10's --stage 3) less, a unit kept in a free
        gather slot since the update needing no second gather (the gathers rule sees each use)."""
        stage3 = self.lesson.number == "09" or (self.lesson.number == "10" and "--stage 3" in " ".join(self.words))
        return ["--after-validation-between", *(["--at-most"] if stage3 else [])]

    def run(self, transcript):
        status = self.start(*wait_limits(), "--csv", self.actual, "--comm-log", self.log)
        passed = run_verdict(transcript, self.name, status, self.out, self.passed_run)
        own_outputs(transcript, self.actual, self.log)
        return all([passed, *self.compare(transcript),
                    compare_columns(transcript, self.expected, self.actual, self.name, "comm_bytes", "0", "0",
                                    *self.bytes_flags()),
                    schedule(transcript, self.lesson.number, self.log, self.name, "the run ended before writing it",
                             ifs_words(self.schedule_flags()))])

    def reproduce(self):
        return [f"    {self.command(self.lesson.binary)} --csv run.csv --comm-log run_log.csv",
                *figure_commands(self.expected, self.lesson.folder),
                f"    build/tools/compare_runs {self.expected} run.csv --columns comm_bytes --rtol 0 --atol 0 "
                + " ".join(self.bytes_flags()),
                f"    build/tools/check_schedule {self.lesson.number} run_log.csv {self.schedule_flags()}"]


class Drift(Check):
    """A dp line's run against lesson 00's fp32 values, within how far 16 bits may drift from them."""

    def __init__(self, words, lesson):
        super().__init__(words, lesson)
        self.expected = f"tests/expected/00_single_device/train_{self.preset}.csv"

    def command(self, binary):
        return mpi_training(self, binary)

    def start(self, *added, stdout_path=None):
        return super().start(*wait_limits(), *added, stdout_path=stdout_path)

    def compare(self, transcript):
        return [compare_columns(transcript, self.expected, self.actual, f"{self.name} vs fp32 (lesson 00)",
                                "loss,val_loss", *drift_tolerance())]

    def reproduce(self):
        rtol, atol = drift_tolerance()
        return [f"    {self.command(self.lesson.binary)} --csv run.csv", f"    build/tools/compare_runs "
                f"{self.expected} run.csv --columns loss,val_loss --rtol {rtol} --atol {atol}"]


class Sanitize(Check):
    """Another line's run, 4 steps of it, with the AddressSanitizer + UBSan build: any report fails."""

    def __init__(self, words, lesson):
        super().__init__(words, lesson)
        self.inner = make_check(words[1:], lesson)
        self.sanitized = sanitizer_build(lesson.binary)

    def sanitized_command(self):
        steps = "" if self.inner.mode == "ring" else f"--steps 4 {' '.join(wait_limits())}"
        return spaced(f"{self.inner.command(self.sanitized)} {steps}")

    def run(self, transcript):
        if not os.access(self.sanitized, os.X_OK):
            transcript.line(f"FAIL {self.name}: {self.sanitized} is not built (make SANITIZE=1 {self.sanitized})")
            return False
        status = student_run(self.lesson.grading, ifs_words(self.sanitized_command()), self.out, sanitized=True)
        finding = sanitizer_finding(self.out, self.lesson.folder)
        if finding is not None:
            transcript.line(f"FAIL {self.name}: {finding}")
            return False
        # wrong sums are the ring check's to report (exit 1 after every count); a run that
        # ended before its last count (a communicator error also exits 1) is this one's
        wrong_sums = self.inner.mode == "ring" and status == 1 and ring_counts(self.out)[1] == RING_COUNTS
        if status != 0 and not wrong_sums:
            # no report: the run failed on its own (its numbers, a communicator error, a wait)
            last = own_last_lines(self.out)
            said = any(LESSON_ERROR.match(line.strip()) for line in last.splitlines())
            ending = ":" if said else f" (exit status {status}; its last lines below)."
            transcript.line(f"FAIL {self.name}: the sanitizer build's run ended with an error{timed_out(status)}, "
                            f"and no sanitizer report{ending}")
            transcript.append(last)
            return False
        transcript.line(f"PASS {self.name}: no AddressSanitizer or UndefinedBehaviorSanitizer report")
        return True

    def reproduce(self):
        # the grader's own settings: a log_path compiled into the program does not hide the report
        settings = " ".join(f"{name}={value}" for name, value in SANITIZER_OPTIONS.items())
        return [f"    make SANITIZE=1 {self.sanitized}", f"    {settings} {self.sanitized_command()}"]


class Resume(Check):
    """A dp line's run, saving its resume state, and a run resumed from that state: the
    resumed steps and the final parameters bit for bit the first run's."""
    saved_after = 20  # of the graded runs' 30 steps

    def __init__(self, words, lesson):
        super().__init__(words, lesson)
        self.inner = make_check(words[1:], lesson)
        self.saved = f"{lesson.grading.outputs}/{self.name}.ck"
        self.resumed = f"{lesson.grading.outputs}/{self.name}.resumed.csv"
        self.resumed_out = f"{lesson.grading.work}/{self.name}.resumed.out"
        self.whole_tail = f"{lesson.grading.work}/{self.name}.tail.csv"

    def command(self, binary):
        return self.inner.command(binary)

    def saving_flags(self):
        return ["--save", self.saved, "--save-every", str(self.saved_after)]

    def run(self, transcript):
        for path in (self.saved, self.saved + ".state", self.resumed):
            remove(path)
        if self.inner.mode != "dp":
            transcript.line(f"FAIL {self.name}: resume takes a dp line (tests/expected/{self.lesson.folder}.checks)")
            return False
        status = self.start(*wait_limits(), "--csv", self.actual, *self.saving_flags())
        passed = run_verdict(transcript, f"{self.name} saving", status, self.out, self.inner.passed_run)
        resumed = False
        if not passed:
            transcript.line(f"FAIL {self.name} resumed run: not run, the run that saves its state failed")
        else:
            words = ifs_words(self.command(self.lesson.binary)) + wait_limits()
            status = student_run(self.lesson.grading, words + ["--resume", self.saved + ".state", "--csv",
                                                               self.resumed], self.resumed_out)
            resumed = run_verdict(transcript, f"{self.name} resumed", status, self.resumed_out, self.inner.passed_run)
        own_outputs(transcript, self.actual, self.resumed)
        self.write_whole_tail()
        return all([passed, resumed, compare_columns(transcript, self.whole_tail, self.resumed,
                                                     f"{self.name} resumed vs whole", ",".join(FIGURES), "0", "0"),
                    self.same_final_parameters(transcript)])

    def write_whole_tail(self):
        """The first run's rows after the saved step, where the resumed run's start."""
        rows = list(file_lines(self.actual)) if nonempty(self.actual) and os.path.isfile(self.actual) else []
        kept = rows[:1] + [row for row in rows[1:] if row.split(",")[0].isdigit()
                           and int(row.split(",")[0]) > self.saved_after]
        with open(self.whole_tail, "w") as tail:
            tail.write("".join(row + "\n" for row in kept))

    def same_final_parameters(self, transcript):
        hashes = [final_hash(self.out), final_hash(self.resumed_out)]
        if None in hashes:
            transcript.line(f"FAIL {self.name} final parameters: a run printed no parameter hash")
            return False
        if hashes[0] != hashes[1]:
            transcript.line(f"FAIL {self.name} final parameters: hash {hashes[1]} resumed, {hashes[0]} without a "
                            f"stop: the resume state (--save-every) does not hold all the run goes on from")
            return False
        transcript.line(f"PASS {self.name} final parameters: the same hash, {hashes[0]}, resumed and whole")
        return True

    def reproduce(self):
        command = self.command(self.lesson.binary)
        return [f"    {command} --csv whole.csv --save ck --save-every {self.saved_after}",
                f"    {command} --csv resumed.csv --resume ck.state",
                f"    awk -F, 'NR == 1 || $1 > {self.saved_after}' whole.csv > whole_tail.csv",
                f"    build/tools/compare_runs whole_tail.csv resumed.csv --columns {','.join(FIGURES)} --rtol 0 --atol 0"]


CHECKS = {"train": Train, "estimate": Estimate, "plan": Plan, "ring": Ring, "dp": DataParallel, "drift": Drift,
          "sanitize": Sanitize, "resume": Resume}


def make_check(words, lesson):
    return CHECKS.get(word(words, 0), Unknown)(words, lesson)


def mpi_training(check, binary):
    """The training run of a dp or drift line: on N ranks, then the preset and the flags."""
    return spaced(f"mpiexec -disable-auto-cleanup -n {word(check.words, 2)} {binary} train --config {check.preset} "
                  f"{' '.join(check.words[3:])}{check.lesson.grading.device_flags()}")


def wait_limits():
    """How long a rank may take a step, and wait for another, before the run ends itself."""
    return ["--step-timeout", setting("GRADE_STEP_TIMEOUT", "60"),
            "--wait-timeout", setting("GRADE_WAIT_TIMEOUT", "30")]


# ---- a lesson: its checks, its verdict

class Grading:
    """What every lesson of one grade shares: its work folder, where runs write, and its flags."""

    def __init__(self, work, options):
        self.work, self.outputs = work, f"{work}/out"
        self.build, self.device, self.only = options.build, options.device, options.only
        self.results = []  # "LESSON\tLINE" for every line graded, for the JSON

    def device_flags(self):
        return "" if self.device == "cpu" else f" --device {self.device}"


def check_lines(path):
    """The words of each line of a .checks file, blank lines left out (a last line without its
    newline counts)."""
    return [words for words in map(ifs_words, lines_of(read_text(path))) if words]


def checks_file(folder):
    path = f"tests/expected/{folder}.checks"
    if not os.path.isfile(path):
        refuse(f"grade: no checks listed in {path}")
    return path


def check_names(number):
    """Lesson NUMBER's checks by name, as printed, in the order of its .checks file."""
    return [check_name(words) for words in check_lines(checks_file(lesson_folder(number)))]


def list_checks(numbers):
    """--list: each lesson's check names, "NN NAME" a line."""
    for number in numbers:
        for name in check_names(number):
            say(f"{number} {name}\n")
    return 0


def require_named_checks(only, number):
    """Exits 2 when --check names a check that lesson NUMBER does not have: said before any run."""
    names = check_names(number)
    for wanted in comma_fields(only):
        if wanted not in names:
            refuse(f"grade: lesson {number} has no check named '{wanted}'")


def compiler_said(build, folder, kind):
    """What the compiler said of KIND (error or warning) when it last built the lesson's files in
    lessons/ (make keeps it beside each object, OBJECT.log), a line each."""
    logs = sorted(glob.glob(f"{glob.escape(build)}/obj/lessons/{glob.escape(folder)}/*.o.log"))
    text = "".join(read_text(log) for log in logs if os.access(log, os.R_OK))  # joined as cat joins them
    return [line for line in lines_of(text) if re.match(rf"[^ ]+:[0-9]+:[0-9]+: (fatal )?{kind}:", line)]


def missing_parts(folder):
    """The earlier references that lessons/FOLDER builds on (its builds_on file) and this copy
    of the course lacks: without them the lesson cannot be built (make says the same)."""
    path = f"lessons/{folder}/builds_on"
    named = lines_of(read_text(path)) if os.access(path, os.R_OK) else []
    return [f"solutions/{name}" for name in named if name and not os.access(f"solutions/{name}", os.R_OK)]


def does_not_compile(lesson, hints):
    """A build that failed grades as one failed check, quoting the compiler's first error."""
    error = (compiler_said(lesson.grading.build, lesson.folder, "error") or [""])[0]
    missing = missing_parts(lesson.folder)
    if missing:
        line = (f"FAIL build: {lesson.binary} cannot be built: it builds on {' '.join(missing)} (the reference's "
                f"parts), which this copy of the course lacks")
        verdict = "1 of 1 checks failed"
    elif error:
        line, verdict = f"FAIL build: does not compile: {error}", f"does not compile: {error}"
    else:
        line, verdict = f"FAIL build: {lesson.binary} is not built (make {lesson.binary})", "1 of 1 checks failed"
    say(f"{line}\nlesson {lesson.number}: FAIL ({verdict}){hints}\n")
    lesson.grading.results.append(f"{lesson.number}\t{line}\n")
    return 1, 1


def graded(check):
    """Runs one check: its text as printed, a failed check's followed by how to redo it by hand."""
    transcript = Transcript()
    status = 0 if check.run(transcript) else 1
    text = "".join(transcript)
    if status and not any(line.startswith("FAIL ") for line in lines_of(text)):
        text += f"FAIL {check.name}: the check failed without saying why (exit status {status})\n"
    if status:
        text += "".join(line + "\n" for line in ["  reproduce:", *check.reproduce()])
    return text


def grade_lesson(grading, number, binary):
    """Grades one lesson: returns how many checks it had, and how many of them failed."""
    folder = lesson_folder(number)
    # your own build: how many of the lesson's hints you have seen, beside the result (never
    # scored); a class's submissions are not yours (they run in the sandbox)
    hints = "" if binary or os.environ.get("GRADE_SANDBOX") else f"   hints seen: {hints_seen(number)}"
    binary = (binary or f"{grading.build}/lessons/{folder}").removeprefix("./")
    lesson = types.SimpleNamespace(grading=grading, number=number, folder=folder, binary=binary)
    path = checks_file(folder)
    if not os.access(binary, os.X_OK):
        return does_not_compile(lesson, hints)
    coretype = os.environ.get("OPENBLAS_CORETYPE")
    kernels = f"OPENBLAS_CORETYPE={coretype}" if coretype else "chosen from the CPU's features"
    where = "" if grading.device == "cpu" else f", training runs on --device {grading.device}"
    say(f"grading {binary} (OpenBLAS kernels: {kernels}{where})\n")
    checks, failed_lines = 0, []
    for check in (make_check(words, lesson) for words in check_lines(path)):
        if grading.only and f",{check.name}," not in f",{grading.only},":
            continue
        if check.mode == "sanitize" and grading.device != "cpu":
            say(f"({check.name} left out on --device {grading.device}: the sanitizers check the CPU build)\n")
            continue
        text = graded(check)
        say(text)
        grading.results.append(prefix_lines(text, f"{number}\t"))
        checks += sum(line.startswith(("PASS ", "FAIL ")) for line in lines_of(text))
        failed_lines += failures_in_one_line(lines_of(text))
    if not failed_lines:
        say(f"lesson {number}: PASS ({checks} of {checks} checks passed){hints}\n")
    else:  # a long grade's failures have scrolled away: each again, on one line, above the verdict
        say(f"the failed checks of lesson {number} again:\n" + "".join(f"  {line}\n" for line in failed_lines) +
            f"lesson {number}: FAIL ({len(failed_lines)} of {checks} checks failed){hints}\n")
    warnings = compiler_said(grading.build, folder, "warning")  # after the verdict: they never change it
    if warnings:
        say(f"the compiler's warnings for lessons/{folder} (they do not change the grade):\n" +
            "".join(f"  {warning}\n" for warning in warnings[:20]))
    return checks, len(failed_lines)


def grade_lessons(grading, numbers):
    """Grades several lessons, then a table of them: returns how many checks failed."""
    for number in numbers:
        require_named_checks(grading.only, number)
    rows = []
    for number in numbers:
        folder = lesson_folder(number)
        rows.append((folder, *grade_lesson(grading, number, "")))
        say("\n")
    say("%-18s %7s %7s  %s\n" % ("lesson", "checks", "failed", "result"))
    for folder, checks, failed in rows:
        say("%-18s %7d %7d  %s\n" % (folder, checks, failed, "FAIL" if failed else "PASS"))
    return sum(failed for _, _, failed in rows)


def all_lessons():
    pattern = "tests/expected/[0-9][0-9]_*.checks"
    return [os.path.basename(path)[:2] for path in sorted(glob.glob(pattern)) or [pattern]]


# ---- the command line

VALUE_FLAGS = {"--json": ("json", "a file"), "--build": ("build", "a folder"),
               "--device": ("device", "cpu or cuda"), "--check": ("only", "a check name")}


def parse_arguments(args):
    options = types.SimpleNamespace(number="", binary="", json="", only=os.environ.get("CHECK", ""),
                                    build="build", device="cpu", list=False)
    while args:
        arg, args = args[0], args[1:]
        if arg in ("-h", "--help"):
            say(__doc__)
            sys.exit(0)
        elif arg in VALUE_FLAGS:
            field, what = VALUE_FLAGS[arg]
            if not args or not args[0]:
                refuse(f"grade: {arg} needs {what}")
            setattr(options, field, args[0])
            args = args[1:]
            if arg == "--device" and not re.fullmatch("cpu|cuda", options.device):
                refuse(f"grade: --device '{options.device}' is not cpu or cuda")
        elif arg == "--list":
            options.list = True
        elif arg.startswith("-"):
            refuse(f"grade: unknown flag {arg} (see --help)")
        elif not options.number:
            options.number = arg
        elif not options.binary:
            options.binary = arg
        else:
            refuse("grade: too many arguments (see --help)")
    return options


def check_json_target(path):
    """Found before grading, not after it."""
    folder = posix_dirname(path)
    if not (os.path.isdir(folder) and os.access(folder, os.W_OK)):
        refuse(f"grade: --json {path}: cannot write into {folder}")
    if os.path.exists(path) and not os.path.isfile(path):
        refuse(f"grade: --json {path}: exists and is not a regular file")


def grade(options, work):
    grading = Grading(work, options)
    os.mkdir(grading.outputs)
    if os.environ.get("GRADE_SANDBOX"):
        os.chmod(work, 0o711)  # the sandbox's user reaches its folder, and sees nothing else
    if options.number and "," not in options.number:
        require_named_checks(grading.only, options.number)
        failed = grade_lesson(grading, options.number, options.binary)[1]
    elif options.binary:
        refuse("grade: a binary needs a single lesson number")
    else:
        failed = grade_lessons(grading, comma_fields(options.number) if options.number else all_lessons())
    if options.json:
        try:
            results.write(grading.results, options.json)
        except OSError as error:
            refuse(f"grade: --json {options.json}: cannot write: {error.strerror}")
    return 1 if failed else 0


def main(args):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output, not with a traceback
    os.chdir(REPOSITORY)  # paths on the command line are the repository's: make grade runs there
    os.environ["PWD"] = REPOSITORY
    options = parse_arguments(args)
    if options.list:
        return list_checks(comma_fields(options.number) if options.number else all_lessons())
    if options.json:
        check_json_target(options.json)
    work = tempfile.mkdtemp(prefix="tmp.")
    try:
        return grade(options, work)
    except KeyboardInterrupt:
        return 130  # Ctrl-C: as a shell reports it, without a traceback
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
