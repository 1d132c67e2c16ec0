#!/usr/bin/env python3
"""The course report from a course run's files (what scripts/run_course.sh writes):

  scripts/make_report.py [--ranks N] [--config TEXT] [RUNS_DIR] [REPORT_DIR]
      (defaults: 2, "--config course", runs, reports)

With RUNS_DIR/yours/ (scripts/run_course.sh --student: your versions of lessons 02-10),
the report also puts your loss curves and step timelines beside the reference's. With
RUNS_DIR/cluster.csv and cluster_busbw.csv (scripts/run_course.sh --cluster), it shows the
lessons and lesson 01's all-reduce across a network beside shared memory.

Writes REPORT_DIR/index.html (one self-contained page: tables and inline SVG plots),
REPORT_DIR/summary.md (the tables, linking the plots), REPORT_DIR/plots/*.svg and the
prepared data the plots are drawn from, REPORT_DIR/data/*.csv. gnuplot draws every plot
(scripts/report/*.gp); this script only picks columns and lays out the page. Each file is
written whole: into a temporary file beside it, renamed over the previous one only once it
is complete, so a run that fails leaves the earlier report's file as it was. REPORT_DIR
must not be RUNS_DIR nor hold it.
"""
import csv
import html
import itertools
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from whole_file import write_atomically, write_whole

# The tables' columns, COLUMN:HEADING:FORMAT (an "_" in a heading shows as a space; FORMAT "s"
# shows the field as written, any other is a printf conversion of its number).
COMPARISON_COLUMNS = """strategy:strategy:s ranks:ranks:s step_ms:step_ms:.2f comm_ms:comm_ms:.2f
    comm_frac_avg:comm_fraction:.3f tokens_per_s:tokens/s:.0f speedup:vs_lesson_00:.2f last_loss:last_loss:.6f
    comm_mb_per_step:comm_MB/step:.3f peak_tracked_mb:peak_tracked_MB/rank:.1f peak_rss_mb:peak_RSS_MB:.1f"""
BREAKDOWN_COLUMNS = """strategy:strategy:s compute_ms:compute_ms:.3f comm_exposed_ms:exposed_comm_ms:.3f
    comm_overlap_ms:overlapped_comm_ms:.3f idle_ms:idle_ms:.3f overlap_pct:overlap_%:.1f"""
SWEEP_COLUMNS = """bucket_mb:bucket_MB:g buckets:buckets:s step_ms:step_ms:.3f step_std_ms:std_ms:.3f
    comm_ms:comm_ms:.3f tokens_per_s:tokens/s:.0f"""
MEMORY_COLUMNS = """stage:stage:s ranks:ranks:s params_mb:params_MB:.3f grads_mb:grads_MB:.3f adam_mb:AdamW_MB:.3f
    master_mb:master_MB:.3f state_mb:model_state_MB:.3f formula_mb:formula_MB:.3f working_mb:working_MB:.3f
    activations_mb:activations_MB:.3f"""
YOURS_COLUMNS = """lesson:lesson:s steps:steps:s last_loss:your_last_loss:.6f reference_last_loss:reference:.6f
    largest_rel_diff:largest_relative_difference:.3g"""
PREDICTED_COLUMNS = """lesson:lesson:s strategy:model:s predicted_step_ms:predicted_step_ms:.3f
    predicted_exposed_ms:predicted_exposed_comm_ms:.3f measured_step_ms:measured_step_ms:.3f error_pct:error_%:+.1f
    measured_exposed_ms:measured_exposed_comm_ms:.3f"""
PREDICTED_YOURS_COLUMNS = " yours_step_ms:your_step_ms:.3f yours_error_pct:your_error_%:+.1f"
CLUSTER_COLUMNS = """lesson:strategy:s network:network:s step_ms:step_ms:.2f comm_ms:comm_ms:.2f
    exposed_ms:exposed_comm_ms:.2f tokens_per_s:tokens/s:.0f vs_shared_memory:tokens/s_vs_shared_memory:.2f"""
CLUSTER_BUSBW_COLUMNS = """network:network:s size:size_(B):.0f busbw_GBps:busbw_(GB/s):.3f
    link_GBps:link_(GB/s):.3f"""
BUSBW_COLUMNS = """collective:collective:s size:size_(B):.0f count:count:.0f redop:redop:s in_place:in-place:s
    time_us:time_(us):.1f algbw_GBps:algbw_(GB/s):.3f busbw_GBps:busbw_(GB/s):.3f wrong:#wrong:s"""

# The shapes scripts/scale_figures.sh carries to scale: its file names' shape, and the title.
SCALE_SHAPES = [("124m", "GPT-2 124M"), ("1558m", "GPT-2 1.5B")]
SCALE_NOTE = ("The step model (tools/predict.py scale, scripts/scale_figures.sh) on a stated system: H100s, 8 a node"
              " on NVLink, 400 Gbit/s a GPU between nodes, 40% of the bf16 peak; 8192 tokens a rank and step, 25 MB"
              " buckets. A prediction from stated figures, not a measurement: docs/scale.md says where each figure"
              " comes from and what the model leaves out.")

# PyTorch's runs (scripts/pytorch_ddp.sh): the folder in RUNS_DIR, its strategy in comparison.csv.
PYTORCH_RUNS = [("pytorch", "pytorch_ddp"), ("pytorch_zero1", "pytorch_zero1"),
                ("pytorch_fsdp_grad_op", "pytorch_fsdp_grad_op"), ("pytorch_fsdp_full", "pytorch_fsdp_full")]

PAGE_STYLE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dtc course report</title>
<style>
body { font-family: sans-serif; max-width: 62em; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
figure { margin: 1.5em 0; } svg.plot { max-width: 100%; height: auto; }
figcaption, .note { color: #555; font-size: 0.9em; }
</style></head><body>
<h1>dtc course report</h1>
"""

BREAKDOWN_NOTE = (
    '<p class="note">From a traced run of each lesson (build/tools/analyze_traces), mean over ranks and over the'
    " traced steps after the warm-up ones, as in the table above. On a CPU overlapped communication is 0: each rank"
    " is one thread, which is not computing while it is inside a communication call, and MPICH moves a started"
    " collective only inside such calls (docs/traces.md). What starting early buys there is less waiting at the"
    " end.</p>\n")

# Each figure's caption ({ranks} and {lesson}: filled in, escaped).
CAPTIONS = {
    "loss_yours": "Your loss per step (dashed) over the reference's (solid), lesson by lesson.",
    "loss_00_single_device": "Lesson 00's loss on the training text per step, and on the validation text (a novel it"
    " never trains on) every few steps.",
    "loss": "Training loss per step, every strategy on the same global batch: the curves lie on one another.",
    "loss_drift": "How far each strategy's loss is from lesson 00's. The tests hold them to lesson 00 within 1e-5"
    " (relative) on the reference config, and lesson 10, which computes and sends in bf16, within 1e-3; summing in"
    " another order rounds differently, and over a long run the difference grows until the runs are distinct samples"
    " of the same training.",
    "breakdown": "Compute, communication with nothing beside it (exposed), communication beside compute (overlapped)"
    " and idle time, per step.",
    "bucket_sweep": "One short run per bucket size (the bars: one standard deviation of its step time either side);"
    " the largest size puts every gradient in one bucket.",
    "memory": "Parameters, gradients and AdamW state per rank at {ranks} ranks, as the tracking allocator measured"
    " them; the dot is the stage's formula (ZeRO-1: 8 + 8/N bytes per parameter, ...; lesson 10's mixed precision on"
    " ZeRO-1, 2 and 3, bf16z1-3: 4 + 12/N, 2 + 14/N and 16/N, its fp32 master shard stacked on top), which padded"
    " shards exceed by a few bytes.",
    "memory_ranks": "Model state per rank as ranks grow: DDP stays flat, each ZeRO stage shards more of it.",
    "scale": "{shape}: tokens/s per rank of each strategy from 8 to 1024 ranks; the dashed line is one rank with"
    " nothing to send.",
    "memory_step": "{lesson}: what rank 0 keeps allocated during one step, by kind (from the trace's memory counter;"
    " token shards, host memory on any device, left out). Every lesson allocates at set-up and keeps it, so the bands"
    " are flat: their heights are the stage's savings. In ZeRO-3 the black line is the parameters a unit has gathered"
    " and is using, inside the communication memory that holds the gather buffers; in lesson 10 it is the unit"
    " widened from bf16 to fp32 for the model to compute with. In lesson 10 the parameters band is bf16 (2 bytes"
    " each) and the optimizer band holds the fp32 master beside AdamW's m and v.",
    "shard_layout": "ZeRO's shard plan (07_zero1 plan): each unit padded up to a multiple of the ranks and cut into"
    " one equal shard per rank.",
    "busbw": "Bus bandwidth per operation and message size, {ranks} ranks; ring is lesson 01's own all-reduce.",
    "cluster": "Step time per strategy and network; hatched, the part of the step blocked in communication (what the"
    " compute did not hide).",
    "cluster_busbw": "Lesson 01's all-reduce across each link, against the link's rate (dashed): 1 Gbit/s carries"
    " 0.125 GB/s. A message that fits in the link's token bucket (1 ms at its rate) can cross faster than the rate.",
}


class Stop(Exception):
    """The run stops: its message goes to standard error, its status is the exit status."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


# --- numbers -----------------------------------------------------------------------------------
# A field is a number where float() reads it. An empty field, a missing one or any other text is
# None: a value the report cannot show, which a table shows as "-" and a data file leaves empty.

def number(text):
    """A field's number; None where it holds none (empty, "abc", or None: a field a short row lacks)."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def formatted(conversion, value):
    """A number in a printf conversion ("%.3f"); "" where there is none."""
    return "" if value is None else conversion % value


def as_text(value):
    """A computed number written into a data file: an integer as one ("2", not "2.0"), anything
    else with 6 significant digits."""
    return "%d" % value if value.is_integer() else "%.6g" % value


def same_value(text, value):
    """Whether a field equals value: compared as numbers where both are numbers (--ranks 02 picks
    the rows of 2 ranks), else as text."""
    field_number, value_number = number(text), number(value)
    if field_number is None or value_number is None:
        return text == value
    return field_number == value_number


def ratio(dividend, divisor):
    """dividend / divisor; None where either is not a number or the divisor is 0."""
    if dividend is None or divisor is None or divisor == 0:
        return None
    return dividend / divisor


def mean(values):
    """The mean of a column's numbers; None for no rows, or where one of them is not a number."""
    if not values or None in values:
        return None
    return sum(values) / len(values)


# --- files -------------------------------------------------------------------------------------

def read_text(path):
    """A file's text, any byte kept as it is (written back, it is the same file)."""
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as source:
        return source.read()


def read_csv(path):
    """(column names, rows as dicts by column name) of a CSV; (None, []) for an empty file. A
    short row's missing fields are None, a long row's extra ones are under the name None."""
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as source:
        reader = csv.DictReader(source)
        return reader.fieldnames, list(reader)


def fields_of(row, columns):
    """A row's fields in the order of its file, as many as it had: the row as written."""
    return [row[column] for column in columns if row[column] is not None] + row.get(None, [])


def field(row, column):
    """A row's field by column name; "" where the row or the file has none."""
    return row.get(column) or ""


def csv_line(fields):
    """One CSV line; a field holding a comma, a quote or a line break is quoted."""
    quoted = ['"%s"' % text.replace('"', '""') if re.search('[,"\r\n]', text) else text for text in fields]
    return ",".join(quoted) + "\n"


def distinct(path, column):
    """The values of a column, each once, in order of first appearance."""
    return list(dict.fromkeys(field(row, column) for row in read_csv(path)[1]))


def spaced(values):
    """Values each followed by a space: the form gnuplot's word() is given them in."""
    return "".join(value + " " for value in values)


def words(values):
    """The words of values, an empty value left out."""
    return spaced(values).split()


def select_rows(path, column, value):
    """A CSV with only the rows whose column equals value (same_value), header kept."""
    columns, rows = read_csv(path)
    if columns is None:
        return ""
    kept = [csv_line(fields_of(row, columns)) for row in rows if same_value(field(row, column), value)]
    return csv_line(columns) + "".join(kept)


def publish(target, content):
    """Writes target whole (scripts/whole_file.py): content is its text, or a writer given the
    temporary file to write. A failure, or an interruption, leaves target as it was."""
    if callable(content):
        write_whole(target, content)
    else:
        write_atomically(target, content.encode("utf-8", "surrogateescape"))  # bytes read are bytes written


def gnuplot(script, name, variables):
    """A writer: scripts/report/SCRIPT.gp run with gnuplot -e VARIABLES into the given file. Any
    output is a failure too: a warning (a data set with no valid points, say) is a wrong picture."""
    def draw(unfinished):
        run = subprocess.run(["gnuplot", "-e", f"out='{unfinished}'; {variables}", f"scripts/report/{script}.gp"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        said = run.stdout.rstrip(b"\n").decode("utf-8", "surrogateescape")
        if run.returncode != 0 or said:
            raise Stop(f"make_report: gnuplot failed on {name}:\n{said}")
    return draw


def drawn_step(trace_dir):
    """The step a trace's timeline shows: the next-to-last traced one, which run_course.sh has
    analyze_traces draw (each step is marked "step#N" in the trace)."""
    with open(f"{trace_dir}/rank_0.json", "rb") as trace:
        return len(re.findall(rb'"name":"step#[0-9]*"', trace.read())) - 1


def training_lessons():
    """The lessons that train, from lessons/ (as the Makefile finds them): all but 01, the
    collectives benchmark."""
    return [name for name in sorted(os.listdir("lessons")) if re.fullmatch("[0-9][0-9]_.*", name)
            and os.path.isdir(f"lessons/{name}") and name != "01_collectives"]


# --- tables --------------------------------------------------------------------------------------

def cell(text, conversion):
    """A table's cell: the field as written ("s") or its number formatted; "-" where it has none."""
    if conversion == "s":
        return text or "-"
    return formatted("%" + conversion, number(text)) or "-"


def table_cells(path, columns):
    """(headings, rows of cells) of a table of the named columns of a CSV; None for an empty file."""
    specs = [item.split(":") for item in columns.split()]
    names, rows = read_csv(path)
    if names is None:
        return None
    return ([heading.replace("_", " ") for _, heading, _ in specs],
            [[cell(field(row, column), conversion) for column, _, conversion in specs] for row in rows])


def table_html(path, columns):
    """The named columns of a CSV as an HTML table."""
    cells = table_cells(path, columns)
    if cells is None:
        return "</table>\n"
    headings, rows = cells
    lines = ["<table>\n<tr>" + "".join(f"<th>{html.escape(text)}</th>" for text in headings) + "</tr>\n"]
    lines += ["<tr>" + "".join(f"<td>{html.escape(text)}</td>" for text in row) + "</tr>\n" for row in rows]
    return "".join(lines) + "</table>\n"


def table_md(path, columns):
    """The named columns of a CSV as a Markdown table."""
    cells = table_cells(path, columns)
    if cells is None:
        return ""
    headings, rows = cells
    lines = ["|" + "".join(f" {text} |" for text in headings) + "\n", "|" + "---|" * len(headings) + "\n"]
    return "".join(lines + ["|" + "".join(f" {text} |" for text in row) + "\n" for row in rows])


# --- the report --------------------------------------------------------------------------------

class Report:
    """One report: the run it reads, the folder it writes, and what each part found."""

    def __init__(self, runs, report, ranks, config, lessons):
        self.runs, self.ranks, self.config, self.lessons = runs, ranks, config, lessons
        self.data, self.plots = f"{report}/data", f"{report}/plots"
        self.stages, self.ops, self.cluster_shape = [], [], ""  # from zero_memory.csv, collectives.csv, cluster.csv
        self.loss_files = [f"{runs}/{lesson}.csv" for lesson in lessons]
        self.loss_names = list(lessons)
        strategies = {field(row, "strategy") for row in read_csv(f"{runs}/comparison.csv")[1]}
        for folder, strategy in PYTORCH_RUNS:
            if os.path.isfile(f"{runs}/{folder}/pytorch_ddp.csv") and strategy in strategies:
                self.loss_files.append(f"{runs}/{folder}/pytorch_ddp.csv")
                self.loss_names.append(strategy)
        self.yours_loss = [lesson for lesson in lessons[1:] if os.path.isfile(f"{runs}/yours/{lesson}.csv")]
        self.yours_timelines = [lesson for lesson in lessons[1:]
                                if os.path.isfile(f"{runs}/yours/traces/{lesson}/timeline.csv")]
        self.memory_lessons = [lesson for lesson in lessons
                               if lesson.startswith("00_") or "zero" in lesson or "mixed" in lesson]
        self.cluster = os.path.isfile(f"{runs}/cluster.csv") and os.path.isfile(f"{runs}/cluster_busbw.csv")
        self.predicted = [lesson for lesson in lessons if os.path.isfile(f"{runs}/predict/{lesson}.csv")]
        self.predicted_timelines = [lesson for lesson in self.predicted
                                    if os.path.isfile(f"{runs}/predict/{lesson}.timeline.csv")]
        self.scales = [shape for shape, _ in SCALE_SHAPES if os.path.isfile(f"{runs}/scale/scale_{shape}_25.csv")]

    def plot(self, script, name, variables):
        publish(f"{self.plots}/{name}.svg", gnuplot(script, name, variables))

    def clear_optional(self):
        """Removes what an earlier report drew from your runs or from a run across a network."""
        def matching(folder, start, end):  # FOLDER/START*END, hidden files left out
            return [f"{folder}/{name}" for name in sorted(os.listdir(folder))
                    if name.startswith(start) and name.endswith(end) and not name.startswith(".")]
        stale = [f"{self.data}/yours.csv", f"{self.data}/predicted.csv"] + matching(self.plots, "", "yours.svg")
        stale += matching(self.plots, "scale_", ".svg")
        stale += matching(self.data, "cluster", ".csv") + matching(self.plots, "cluster", ".svg")
        for path in stale:
            if os.path.lexists(path):
                os.remove(path)

    def breakdown_data(self):
        """Mean over ranks of each lesson's analyzer summary: compute, exposed and overlapped
        communication, idle (ms per step), overlap %."""
        lines = [csv_line(["strategy", "compute_ms", "comm_exposed_ms", "comm_overlap_ms", "idle_ms", "overlap_pct"])]
        for lesson in self.lessons:
            rows = read_csv(f"{self.runs}/traces/{lesson}/summary.csv")[1]
            means = [mean([number(field(row, column)) for row in rows]) for column in
                     ("compute_ms", "comm_exposed_ms", "comm_overlap_ms", "idle_ms", "overlap_pct")]
            cells = [formatted("%.4f", value) for value in means[:4]] + [formatted("%.2f", means[4])]
            lines.append(csv_line([lesson] + cells))
        publish(f"{self.data}/breakdown.csv", "".join(lines))

    def memory_data(self):
        self.stages = distinct(f"{self.runs}/zero_memory.csv", "stage")
        for stage in words(self.stages):
            publish(f"{self.data}/memory_{stage}.csv", select_rows(f"{self.runs}/zero_memory.csv", "stage", stage))
        publish(f"{self.data}/memory_at_{self.ranks}.csv",
                select_rows(f"{self.runs}/zero_memory.csv", "ranks", self.ranks))

    def busbw_data(self):
        self.ops = distinct(f"{self.runs}/collectives.csv", "collective")
        for op in words(self.ops):
            publish(f"{self.data}/busbw_{op}.csv", select_rows(f"{self.runs}/collectives.csv", "collective", op))

    def loss_drift_data(self):
        """|loss - lesson 00's loss| per step for every other strategy. Row i of each file is the
        same step, as in one run of the course. A drift is left empty where it is 0 (no log of 0)
        or not a number (a loss that is not one, a NaN, a step one file lacks): no point drawn."""
        def drift(row, base):
            loss = number(field(row, "loss"))
            if loss is None or base is None or not abs(loss - base) > 0:
                return ""
            return as_text(abs(loss - base))

        tables = [read_csv(path) for path in self.loss_files]
        lines = [] if all(names is None for names, _ in tables) else [csv_line(["step"] + self.loss_names[1:])]
        for first, *others in itertools.zip_longest(*(rows for _, rows in tables), fillvalue={}):
            base = number(field(first, "loss"))
            lines.append(csv_line([field(first, "step")] + [drift(row, base) for row in others]))
        publish(f"{self.data}/loss_drift.csv", "".join(lines))

    def loss_plots(self):
        self.plot("loss_val", "loss_00_single_device", f"data='{self.runs}/00_single_device.csv'")
        self.plot("loss", "loss", f"files='{' '.join(self.loss_files)}'; names='{' '.join(self.loss_names)}'")

    def yours_row(self, lesson):
        """Your last loss against the reference's at the same step, and the largest relative
        difference over the steps both ran (your steps past the reference's last are not compared).
        A NaN loss makes it nan; a loss that is not a number, a reference loss of 0, or no step
        that both ran leaves it unknown: the table shows "-"."""
        reference = {field(row, "step"): field(row, "loss") for row in read_csv(f"{self.runs}/{lesson}.csv")[1]}
        mine = read_csv(f"{self.runs}/yours/{lesson}.csv")[1]
        last = last_reference = ""
        compared = [row for row in mine if field(row, "step") in reference]
        worst = 0.0 if compared else None
        for row in mine:
            last, last_reference = field(row, "loss"), reference.get(field(row, "step"), "")
            if field(row, "step") not in reference:
                continue  # past the reference's last step: nothing to compare with
            yours, theirs = number(last), number(last_reference)
            difference = None if yours is None or theirs is None else ratio(abs(yours - theirs), abs(theirs))
            # an unknown difference (None) makes the largest unknown; a NaN makes it nan from there on
            if worst is not None and (difference is None or math.isnan(difference) or difference > worst):
                worst = difference
        return csv_line([lesson, "%d" % len(mine), last, last_reference, formatted("%.3g", worst)])

    def yours_data_and_plot(self):
        """Your runs, where run_course.sh --student left them, over the reference's."""
        if not self.yours_loss:
            return
        refs = " ".join(f"{self.runs}/{lesson}.csv" for lesson in self.yours_loss)
        mine = " ".join(f"{self.runs}/yours/{lesson}.csv" for lesson in self.yours_loss)
        self.plot("loss_yours", "loss_yours", f"refs='{refs}'; yours='{mine}'; names='{' '.join(self.yours_loss)}'")
        header = csv_line(["lesson", "steps", "last_loss", "reference_last_loss", "largest_rel_diff"])
        publish(f"{self.data}/yours.csv", header + "".join(self.yours_row(lesson) for lesson in self.yours_loss))

    def timeline_plot(self, name, title, trace_dir):
        """One step of an analysed trace (analyze_traces --timeline), every rank."""
        ranks = len(read_csv(f"{trace_dir}/summary.csv")[1]) or ""
        tracks = spaced(distinct(f"{trace_dir}/timeline.csv", "track"))
        self.plot("timeline", name, f"data='{trace_dir}/timeline.csv'; name='{title}'; "
                  f"step='{drawn_step(trace_dir)}'; ranks={ranks}; tracks='{tracks}'")

    def timeline_plots(self):
        for lesson in self.lessons:
            self.timeline_plot(f"timeline_{lesson}", lesson, f"{self.runs}/traces/{lesson}")
        for lesson in self.yours_timelines:
            self.timeline_plot(f"timeline_{lesson}_yours", f"your {lesson}", f"{self.runs}/yours/traces/{lesson}")
        for lesson in self.predicted_timelines:  # one rank, as the step model sees it
            self.plot("timeline", f"timeline_{lesson}_predicted", f"data='{self.runs}/predict/{lesson}.timeline.csv'; "
                      f"name='{lesson}, predicted'; step='the model'; ranks=1; tracks='0 1'")

    def memory_top(self):
        """The highest stack of any memory step plot, and a tenth more: one scale for all (token
        shards and the gathered line left out, as the plot leaves them out)."""
        top = 0.0
        for lesson in self.memory_lessons:
            names, rows = read_csv(f"{self.data}/memory_step_{lesson}.csv")
            stacked = [name for name in dict.fromkeys(names or [])
                       if name.endswith("_mb") and name not in ("data_mb", "gathered_mb")]
            for row in rows:  # a field that is not a number adds nothing
                total = sum(value for value in (number(field(row, name)) for name in stacked) if value is not None)
                top = max(top, total)
        return as_text(top * 1.1) if top > 0 else "1"

    def memory_step_plots(self):
        """Memory over one step, rank 0, for lesson 00, each ZeRO stage and mixed precision."""
        for lesson in self.memory_lessons:
            publish(f"{self.data}/memory_step_{lesson}.csv",
                    select_rows(f"{self.runs}/traces/{lesson}/memory.csv", "rank", "0"))
        top = self.memory_top()
        for lesson in self.memory_lessons:
            rows = read_csv(f"{self.data}/memory_step_{lesson}.csv")[1]
            gathered_mb = [number(field(row, "gathered_mb")) for row in rows]
            gathered = any(value is not None and value > 0 for value in gathered_mb)
            in_use = "widened" if "mixed" in lesson else "gathered"  # lesson 10: from its own bf16 copy
            self.plot("memory_step", f"memory_step_{lesson}",
                      f"data='{self.data}/memory_step_{lesson}.csv'; name='{lesson}'; "
                      f"step='{drawn_step(f'{self.runs}/traces/{lesson}')}'; ymax={top}; gathered={int(gathered)}; "
                      f"in_use='{in_use}'")

    def shard_plan(self):
        publish(f"{self.data}/shard_plan.csv", read_text(f"{self.runs}/shard_plan.csv"))
        ranks = len(words(distinct(f"{self.runs}/shard_plan.csv", "rank")))
        units = len(words(distinct(f"{self.runs}/shard_plan.csv", "unit")))
        self.plot("shard_layout", "shard_layout", f"data='{self.data}/shard_plan.csv'; ranks={ranks}; units={units}")

    def ranks_plots(self):
        """Memory and bus bandwidth against ranks and message size: one data file per stage or operation."""
        memory_files = " ".join(f"{self.data}/memory_{stage}.csv" for stage in words(self.stages))
        busbw_files = " ".join(f"{self.data}/busbw_{op}.csv" for op in words(self.ops))
        self.plot("memory_ranks", "memory_ranks", f"files='{memory_files}'; names='{spaced(self.stages)}'")
        self.plot("busbw", "busbw", f"files='{busbw_files}'; names='{spaced(self.ops)}'; ranks='{self.ranks}'")

    def cluster_steps_csv(self, networks):
        """One row per strategy with each network's step and communication time (for the plot)."""
        rows = read_csv(f"{self.data}/cluster.csv")[1]
        times = {(field(row, "lesson"), field(row, "network")): row for row in rows}
        columns = [(net, kind) for net in words(networks) for kind in ("step", "comm")]
        lines = [csv_line(["strategy"] + [f"{net}_{kind}_ms" for net, kind in columns])]
        for lesson in dict.fromkeys(field(row, "lesson") for row in rows):
            cells = [field(times.get((lesson, net), {}), f"{kind}_ms") for net, kind in columns]
            lines.append(csv_line([lesson] + cells))
        return "".join(lines)

    def cluster_table_csv(self):
        """Per lesson and network its tokens/s against the same lesson on shared memory (for the
        table); empty, "-" in the table, where either is not a number or shared memory's is 0."""
        columns, rows = read_csv(f"{self.data}/cluster.csv")
        if columns is None:
            return ""
        shared = {field(row, "lesson"): field(row, "tokens_per_s") for row in rows if field(row, "network") == "shm"}
        lines = [csv_line(columns + ["vs_shared_memory"])]
        for row in rows:
            base = shared.get(field(row, "lesson"), "")
            against_shm = ratio(number(field(row, "tokens_per_s")), number(base))
            lines.append(csv_line(fields_of(row, columns) + [formatted("%.2f", against_shm)]))
        return "".join(lines)

    def cluster_data_and_plots(self):
        """Across a network, where run_course.sh --cluster ran it: the first shape's rows."""
        self.cluster_shape = spaced(distinct(f"{self.runs}/cluster.csv", "shape")).split(" ")[0]
        publish(f"{self.data}/cluster.csv", select_rows(f"{self.runs}/cluster.csv", "shape", self.cluster_shape))
        networks = distinct(f"{self.data}/cluster.csv", "network")
        lessons = distinct(f"{self.data}/cluster.csv", "lesson")
        publish(f"{self.data}/cluster_steps.csv", self.cluster_steps_csv(networks))
        publish(f"{self.data}/cluster_table.csv", self.cluster_table_csv())
        self.plot("cluster", "cluster", f"data='{self.data}/cluster_steps.csv'; networks='{spaced(networks)}'; "
                  f"strategies='{spaced(lessons)}'")
        busbw_networks = distinct(f"{self.runs}/cluster_busbw.csv", "network")
        for network in words(busbw_networks):
            publish(f"{self.data}/cluster_busbw_{network}.csv",
                    select_rows(f"{self.runs}/cluster_busbw.csv", "network", network))
        files = " ".join(f"{self.data}/cluster_busbw_{network}.csv" for network in words(busbw_networks))
        links = [network for network in words(busbw_networks) if network != "shm"]
        link_files = " ".join(f"{self.data}/cluster_busbw_{network}.csv" for network in links)
        self.plot("cluster_busbw", "cluster_busbw", f"files='{files}'; names='{spaced(busbw_networks)}';\n"
                  f"        links='{link_files}'; link_names='{' '.join(links)}'")

    def predicted_data(self):
        """The step model's prediction of each lesson it models (runs/predict/, tools/predict.py) beside the
        lesson's measured mean step and exposed communication (its summary), and how far off it was."""
        def measured(summary, step):  # (the summary's mean step in ms, the prediction's error in %, exposed ms)
            rows = read_csv(summary)[1] if os.path.isfile(summary) else []
            seconds = number(field(rows[0], "step_time_avg_s")) if rows else None
            if seconds is None:
                return "", "", ""
            error = None if step is None or seconds == 0 else 100 * (step - 1e3 * seconds) / (1e3 * seconds)
            exposed = number(field(rows[0], "exposed_time_avg_s"))
            return (formatted("%.4f", 1e3 * seconds), formatted("%.2f", error),
                    formatted("%.4f", None if exposed is None else 1e3 * exposed))

        lines = [csv_line(["lesson", "strategy", "predicted_step_ms", "predicted_exposed_ms", "measured_step_ms",
                           "error_pct", "measured_exposed_ms", "yours_step_ms", "yours_error_pct"])]
        for lesson in self.predicted:
            predicted = read_csv(f"{self.runs}/predict/{lesson}.csv")[1]
            if not predicted:
                raise Stop(f"make_report: {self.runs}/predict/{lesson}.csv has no row")
            step = number(field(predicted[0], "step_ms"))
            lines.append(csv_line([lesson, field(predicted[0], "strategy"), formatted("%.4f", step),
                                   field(predicted[0], "exposed_ms"),
                                   *measured(f"{self.runs}/{lesson}.summary.csv", step),
                                   *measured(f"{self.runs}/yours/{lesson}.summary.csv", step)[:2]]))
        publish(f"{self.data}/predicted.csv", "".join(lines))

    def predicted_columns(self):
        """The table of predictions, with your runs' columns when the report has your runs."""
        return PREDICTED_COLUMNS + (PREDICTED_YOURS_COLUMNS if self.yours_loss else "")

    def scale_plots(self):
        """The step model carried to many ranks (scripts/scale_figures.sh): tokens/s per rank of each strategy."""
        for shape, title in SCALE_SHAPES:
            if shape not in self.scales:
                continue
            data = f"{self.runs}/scale/scale_{shape}_25.csv"
            self.plot("scale", f"scale_{shape}", f"data='{data}'; name='{title}';"
                      f" strategies='{spaced(distinct(data, 'strategy'))}'")

    def comparison_table_csv(self):
        """The comparison with times in ms and speed against lesson 00 (column speedup, added here;
        empty, "-" in the table, where either tokens/s is not a number or lesson 00's is 0)."""
        def milliseconds(row, column):
            seconds = number(field(row, column))
            return None if seconds is None else 1e3 * seconds

        columns, rows = read_csv(f"{self.runs}/comparison.csv")
        if columns is None:
            return ""
        base = None
        for row in rows:
            base = number(field(row, "tokens_per_s")) if field(row, "strategy") == "single_device" else base
        lines = [csv_line(columns + ["step_ms", "comm_ms", "speedup"])]
        for row in rows:
            speedup = ratio(number(field(row, "tokens_per_s")), base)
            lines.append(csv_line(fields_of(row, columns) + [formatted("%.3f", milliseconds(row, "step_time_avg_s")),
                                                             formatted("%.3f", milliseconds(row, "comm_time_avg_s")),
                                                             formatted("%.2f", speedup)]))
        return "".join(lines)

    # --- the pages ---

    def figure(self, name, caption):
        """A plot inlined: without its XML prologue, its ids made unique to the page."""
        lines = read_text(f"{self.plots}/{name}.svg").split("\n")  # the last, after the last newline, may be ""
        svg = []
        for i, line in enumerate(lines):
            if line.startswith("<?xml") or (i == len(lines) - 1 and line == ""):
                continue
            line = line.replace("gnuplot_", f"{name}_gnuplot_").replace("gpPt", f"{name}_gpPt")
            svg.append(line.replace("<svg ", '<svg class="plot" ', 1) + ("\n" if i < len(lines) - 1 else ""))
        svg = "".join(svg)
        return f'<figure id="{html.escape(name)}">\n{svg}<figcaption>{caption}</figcaption>\n</figure>\n'

    def cluster_html(self):
        shape = html.escape(self.cluster_shape)
        return "".join([f"""<h2 id="cluster">Across a network: two hosts on this machine</h2>
<p class="note">scripts/bench_cluster.sh ({shape} shape, see docs/cluster.md): each lesson at 2 ranks on
shared memory, then one rank on each of two hosts whose links are shaped to each rate; medians of interleaved
rounds, warm-up steps left out. The hosts share this machine's cores; the link is the only thing added.</p>
""", self.figure("cluster", CAPTIONS["cluster"]), table_html(f"{self.data}/cluster_table.csv", CLUSTER_COLUMNS),
            self.figure("cluster_busbw", CAPTIONS["cluster_busbw"]),
            table_html(f"{self.runs}/cluster_busbw.csv", CLUSTER_BUSBW_COLUMNS)])

    def index_html(self, made):
        """The page: every table, every plot inline; what comes from the run or the command line is escaped."""
        runs, ranks, config, made = (html.escape(text) for text in (self.runs, self.ranks, self.config, made))
        page = [PAGE_STYLE, f'<p class="note">Run flags: <code>{config}</code>, {ranks} ranks for the data-parallel'
                f""" lessons. Made {made}.
Every number below comes from the files in <code>{runs}/</code>; the plot data is in <code>data/</code>.</p>
<h2 id="comparison">Every strategy side by side</h2>
<p class="note">Step and comm time are the slowest rank's mean after the warm-up steps; comm time is time blocked
in communication calls; comm MB counts an all-reduce of n bytes as 2n; vs lesson 00 is tokens/s against the
single device.</p>
""", table_html(f"{self.data}/comparison_table.csv", COMPARISON_COLUMNS)]
        if self.predicted:
            page += ["""<h2 id="predicted">Predicted against measured</h2>
<p class="note">The step model (tools/predict.py step, docs/scale.md): lesson 00's compute at one rank's share
of the batch, the units and buckets of lesson 05's plan, every collective priced by a line fitted to lesson 01's
measurements; against each lesson's measured mean step above (and yours, with --student). Negative: the model
predicted a shorter step.</p>
""", table_html(f"{self.data}/predicted.csv", self.predicted_columns())]
        if self.scales:
            page += ['<h2 id="scale">Carried to scale</h2>\n', f'<p class="note">{SCALE_NOTE}</p>\n']
            page += [self.figure(f"scale_{shape}", CAPTIONS["scale"].format(shape=html.escape(title)))
                     for shape, title in SCALE_SHAPES if shape in self.scales]
        if self.yours_loss:
            page += ["""<h2 id="yours">Your runs beside the reference</h2>
<p class="note">Your versions (build/lessons/, scripts/run_course.sh --student) with the same flags;
a lesson that stopped with an error shows the steps it ran. Your step timelines follow each reference's below.</p>
""", table_html(f"{self.data}/yours.csv", YOURS_COLUMNS), self.figure("loss_yours", CAPTIONS["loss_yours"])]
        page += ['<h2 id="loss">Loss curves</h2>\n'] + [self.figure(name, CAPTIONS[name])
                                                         for name in ("loss_00_single_device", "loss", "loss_drift")]
        page += ['<h2 id="breakdown">Where the step time goes</h2>\n', BREAKDOWN_NOTE,
                 self.figure("breakdown", CAPTIONS["breakdown"]),
                 table_html(f"{self.data}/breakdown.csv", BREAKDOWN_COLUMNS),
                 '<h2 id="timelines">One step, per rank</h2>\n<p class="note">Each rank from the start of its own'
                 " step. Open the traces themselves in Perfetto: see docs/traces.md.</p>\n"]
        for lesson, name in ((lesson, html.escape(lesson)) for lesson in self.lessons):
            page.append(self.figure(f"timeline_{lesson}", f"{name}: {runs}/traces/{name}/merged.json"))
            if lesson in self.predicted_timelines:
                page.append(self.figure(f"timeline_{lesson}_predicted", f"{name} as the step model predicts it"
                                        f" (rank 0): {runs}/predict/{name}.timeline.csv"))
            if os.path.isfile(f"{self.plots}/timeline_{lesson}_yours.svg"):
                yours = f"Your {name}: {runs}/yours/traces/{name}/merged.json"
                page.append(self.figure(f"timeline_{lesson}_yours", yours))
        page += ['<h2 id="sweep">Bucket size (lesson 05)</h2>\n',
                 self.figure("bucket_sweep", CAPTIONS["bucket_sweep"]),
                 table_html(f"{self.data}/bucket_sweep.csv", SWEEP_COLUMNS),
                 '<h2 id="memory">Memory per rank: DDP, ZeRO-1/2/3, and each in mixed precision</h2>\n',
                 self.figure("memory", CAPTIONS["memory"].format(ranks=ranks)),
                 self.figure("memory_ranks", CAPTIONS["memory_ranks"])]
        page += [self.figure(f"memory_step_{lesson}", CAPTIONS["memory_step"].format(lesson=html.escape(lesson)))
                 for lesson in self.memory_lessons]
        page += [self.figure("shard_layout", CAPTIONS["shard_layout"]),
                 table_html(f"{self.runs}/zero_memory.csv", MEMORY_COLUMNS),
                 '<h2 id="collectives">Collectives (lesson 01)</h2>\n',
                 self.figure("busbw", CAPTIONS["busbw"].format(ranks=ranks)),
                 table_html(f"{self.runs}/collectives.csv", BUSBW_COLUMNS)]
        if self.cluster:
            page.append(self.cluster_html())
        return "".join(page + ["</body></html>\n"])

    def summary_md(self, made):
        """The tables, linking the plots."""
        md = [f"""# dtc course report

Run flags: `{self.config}`, {self.ranks} ranks. Made {made}. The page with every plot inline: `index.html`.

## Every strategy side by side

""", table_md(f"{self.data}/comparison_table.csv", COMPARISON_COLUMNS), """
![lesson 00's training and validation loss](plots/loss_00_single_device.svg)
![loss curves](plots/loss.svg) ![distance from lesson 00](plots/loss_drift.svg)

"""]
        if self.predicted:
            md += ["## Predicted against measured (tools/predict.py step, docs/scale.md)\n\n",
                   table_md(f"{self.data}/predicted.csv", self.predicted_columns()), "\n"]
        if self.scales:
            md += [f"## Carried to scale\n\n{SCALE_NOTE}\n\n"]
            md += [f"![{title}: tokens/s per rank as ranks grow](plots/scale_{shape}.svg)\n"
                   for shape, title in SCALE_SHAPES if shape in self.scales]
            md.append("\n")
        if self.yours_loss:
            md += ["## Your runs beside the reference\n\n", table_md(f"{self.data}/yours.csv", YOURS_COLUMNS),
                   "\n![your loss over the reference's](plots/loss_yours.svg)\n"]
            md += [f"![reference {lesson}](plots/timeline_{lesson}.svg)"
                   f" ![your {lesson}](plots/timeline_{lesson}_yours.svg)\n" for lesson in self.yours_timelines]
            md.append("\n")
        md += ["## Where the step time goes (traced runs, mean over ranks)\n\n",
               table_md(f"{self.data}/breakdown.csv", BREAKDOWN_COLUMNS),
               "\n![step-time breakdown](plots/breakdown.svg)\n\n## Bucket size (lesson 05)\n\n",
               table_md(f"{self.data}/bucket_sweep.csv", SWEEP_COLUMNS),
               "\n![bucket sweep](plots/bucket_sweep.svg)\n\n## Memory per rank: DDP and ZeRO-1/2/3\n\n",
               table_md(f"{self.runs}/zero_memory.csv", MEMORY_COLUMNS),
               "\n![memory per rank](plots/memory.svg) ![memory against ranks](plots/memory_ranks.svg)\n"]
        md += [f"![memory over one step of {lesson}](plots/memory_step_{lesson}.svg)\n"
               for lesson in self.memory_lessons]
        md += ["![shard plan](plots/shard_layout.svg)\n\n## Collectives (lesson 01): ![busbw](plots/busbw.svg)\n"]
        if self.cluster:
            md += [f"\n## Across a network: two hosts on this machine ({self.cluster_shape} shape)\n\n",
                   table_md(f"{self.data}/cluster_table.csv", CLUSTER_COLUMNS), "\n![step time across a network]"
                   "(plots/cluster.svg) ![all-reduce across a link](plots/cluster_busbw.svg)\n"]
        return "".join(md)


# --- the run ---------------------------------------------------------------------------------------

def made_on():
    """When and where: "2025-01-31 12:00 UTC on HOST, N cores, CPU"."""
    # nproc, not os.cpu_count(): it counts the cores this process may use and honours OMP_NUM_THREADS
    cores = subprocess.run(["nproc"], stdout=subprocess.PIPE, text=True, check=False).stdout.rstrip("\n")
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="surrogateescape") as cpuinfo:
            model = next((line.rstrip("\n").split(": ") + [""])[1] for line in cpuinfo if "model name" in line)
    except StopIteration:
        model = ""
    except OSError:
        model = "unknown CPU"
    return f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.uname().nodename}, {cores} cores, {model}"


def parse_arguments(arguments):
    """(ranks, config, runs, report) from [--ranks N] [--config TEXT] [RUNS_DIR] [REPORT_DIR]."""
    ranks, config = "2", "--config course"
    needs = {"--ranks": "a number", "--config": "the run flags"}
    while arguments:
        option = arguments[0]
        if option in needs:
            if len(arguments) < 2 or arguments[1] == "":
                raise Stop(f"make_report: {option} needs {needs[option]}", 2)
            ranks, config = (arguments[1], config) if option == "--ranks" else (ranks, arguments[1])
            arguments = arguments[2:]
        elif option in ("-h", "--help"):
            sys.stdout.write(__doc__)
            sys.exit(0)
        elif option.startswith("-"):
            raise Stop(f"make_report: unknown option {option} (--ranks N, --config TEXT)", 2)
        else:
            break
    runs = arguments[0] if arguments and arguments[0] else "runs"
    report = arguments[1] if len(arguments) > 1 and arguments[1] else "reports"
    return ranks, config, runs, report


def check_inputs(runs, report, lessons):
    """Refuses a report into the runs folder or around it (the report clears files of its own
    folders that an earlier report drew), and a run that is not all there."""
    if os.path.exists(runs) and os.path.exists(report):
        runs_real, report_real = os.path.realpath(runs), os.path.realpath(report)
        if os.path.commonpath([runs_real, report_real]) == report_real:
            raise Stop(f"make_report: {report} is or holds the runs folder {runs}: write the report into a folder "
                       "of its own", 2)
    if shutil.which("gnuplot") is None:
        raise Stop("make_report: gnuplot is missing (make setup installs gnuplot-nox)")
    needed = ["comparison.csv", "collectives.csv", "bucket_sweep.csv", "zero_memory.csv", "shard_plan.csv"]
    for path in needed + [f"{lesson}.csv" for lesson in lessons] + [f"traces/{lesson}" for lesson in lessons]:
        if not os.path.exists(f"{runs}/{path}"):
            raise Stop(f"make_report: {runs}/{path} is missing (run scripts/run_course.sh first)")
    for lesson in lessons:
        for name in ("summary.csv", "timeline.csv", "memory.csv", "rank_0.json"):
            if not os.path.isfile(f"{runs}/traces/{lesson}/{name}"):
                maker = "--trace" if name.endswith(".json") else "build/tools/analyze_traces"
                raise Stop(f"make_report: {runs}/traces/{lesson}/{name} is missing ({maker} makes it)")


def make_report(ranks, config, runs, report_dir):
    """Every file of the report: the data first, the plots drawn from it, then the pages."""
    lessons = training_lessons()
    check_inputs(runs, report_dir, lessons)
    os.makedirs(f"{report_dir}/plots", exist_ok=True)
    os.makedirs(f"{report_dir}/data", exist_ok=True)
    report = Report(runs, report_dir, ranks, config, lessons)
    report.clear_optional()
    report.breakdown_data()
    report.memory_data()
    report.busbw_data()
    for copied in ("bucket_sweep.csv", "comparison.csv"):
        publish(f"{report.data}/{copied}", read_text(f"{runs}/{copied}"))
    report.loss_drift_data()
    report.loss_plots()
    report.yours_data_and_plot()
    drifting = " ".join(report.loss_names[1:])
    report.plot("loss_drift", "loss_drift", f"data='{report.data}/loss_drift.csv'; names='{drifting}'")
    report.plot("breakdown", "breakdown", f"data='{report.data}/breakdown.csv'")
    report.timeline_plots()
    report.memory_step_plots()
    report.plot("sweep", "bucket_sweep", f"data='{report.data}/bucket_sweep.csv'")
    report.plot("memory", "memory", f"data='{report.data}/memory_at_{ranks}.csv'; ranks='{ranks}'")
    report.shard_plan()
    report.ranks_plots()
    if report.cluster:
        report.cluster_data_and_plots()
    publish(f"{report.data}/comparison_table.csv", report.comparison_table_csv())
    if report.predicted:
        report.predicted_data()
    report.scale_plots()
    made = made_on()
    publish(f"{report_dir}/index.html", report.index_html(made))
    publish(f"{report_dir}/summary.md", report.summary_md(made))
    drawn = sum(name.endswith(".svg") for _, folders, files in os.walk(report.plots) for name in folders + files)
    said = f"report: {report_dir}/index.html, {report_dir}/summary.md ({drawn} plots)\n"
    sys.stdout.buffer.write(said.encode("utf-8", "surrogateescape"))  # a folder's name as its bytes


def main(arguments):
    # from the repository's root: lessons/, scripts/report/, and a relative RUNS_DIR or REPORT_DIR
    os.chdir(os.path.join(os.path.dirname(__file__) or ".", ".."))
    # stopped by a signal, publish() still removes its temporary file (SystemExit passes through it)
    signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
    try:
        make_report(*parse_arguments(arguments))
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except Stop as stop:
        message, status = str(stop), stop.status
    except (OSError, csv.Error) as error:
        message, status = f"make_report: {error}", 1
    else:
        return 0
    sys.stdout.flush()
    sys.stderr.buffer.write((message + "\n").encode("utf-8", "surrogateescape"))  # gnuplot's bytes as it said them
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
