#!/usr/bin/env python3
"""Trains the course's GPT with PyTorch's DDP, ZeRO-1 or FSDP on CPU ranks (gloo).

This is an outside check of the C code: it loads the same llm.c-format checkpoint, reads
the same token shards in the same global-batch order, and applies the same AdamW, clipping
and learning-rate schedule, so its per-step loss and gradient norm must match lesson 00's
single-device run within the project tolerance. It is also the "pytorch_ddp" baseline
row of the strategy tables.

The configuration is never written down here: it is asked from lesson 00 itself
(`00_single_device train ... --dry-run` prints every setting as "config KEY VALUE"), so
this script trains exactly what lesson 00 would train with the same flags.

    pytorch_ddp.py --init-from CKPT [--config PRESET] [lesson 00 flags] [--csv PATH]
                   [--summary PATH] [--ranks N [--zero1 | --fsdp MODE] | --eager] [--steps N]

--eager trains in one process without DDP or a process group: PyTorch eager, the baseline
beside lesson 00 on one device (strategy "pytorch_eager" in the summary).

--zero1 keeps DDP and shards AdamW's state with PyTorch's own ZeRO-1, ZeroRedundancyOptimizer
(strategy "pytorch_zero1"): the baseline beside lesson 07.

--fsdp MODE trains with PyTorch's FSDP (fully_shard, one FSDP unit per transformer block and
one for the rest: the embeddings and the final LayerNorm) instead of DDP. MODE grad_op
(strategy "pytorch_fsdp_grad_op") keeps each unit's gathered parameters from its forward to
its backward, ShardingStrategy.SHARD_GRAD_OP's schedule, the baseline beside lesson 08;
MODE full (strategy "pytorch_fsdp_full") frees them after forward and gathers them again
for backward, FULL_SHARD's, beside lesson 09. Both keep a shard of the parameters, of the
gradients and of AdamW's state between steps. FSDP needs PyTorch 2.6 or later: Debian 12's
python3-torch (1.13) cannot import it on Python 3.11, PyPI's torch can (make torch).

The summary's params_mb, grads_mb and adam_mb are what one rank keeps between steps, the
largest over the ranks.

--csv and --summary are written whole: to a temporary file in the same folder, renamed into
place, so a run that fails leaves an earlier file as it was. Their folders are checked before
any process starts, without creating the files.

Exit status: 0 done, 2 bad input, 77 PyTorch is not installed (a test reports a skip).
"""

import argparse
import importlib
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from whole_file import write_atomically

PROG = "pytorch_ddp"
SKIP_EXIT = 77
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_LESSON_BINARY = os.path.join(REPO_ROOT, "build", "solutions", "00_single_device")

CHECKPOINT_MAGIC, CHECKPOINT_VERSION = 20240326, 3
SHARD_MAGIC, SHARD_VERSION = 20240520, 1
HEADER_INTS = 256
LAYERNORM_EPS = 1e-5

# Tensor kinds in the order of common/layout.c; the middle twelve repeat per layer.
EMBEDDING_KINDS = ["wte", "wpe"]
BLOCK_KINDS = ["ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
               "ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb"]
FINAL_KINDS = ["lnfw", "lnfb"]

# --fsdp MODE: FSDP's reshard_after_forward, and the strategy's name in the summary.
FSDP_MODES = {"grad_op": (False, "pytorch_fsdp_grad_op"), "full": (True, "pytorch_fsdp_full")}

CSV_HEADER = "step,loss,grad_norm,lr,ms,tokens_per_s,val_loss"
SUMMARY_HEADER = ("strategy,ranks,threads,steps_measured,step_time_avg_s,step_time_std_s,"
                  "comm_time_avg_s,comm_time_std_s,comm_frac_avg,comm_frac_std,"
                  "tokens_per_s,peak_rss_mb,last_loss,params_mb,grads_mb,adam_mb")

# Lesson 00 flags this script cannot pass on: they would make the configuration query
# write files or do work, or they belong to this script.
REFUSED_PASS_THROUGH = {"--save": "this script does not save checkpoints",
                        "--gen-tokens": "this script does not generate text",
                        "--prompt": "this script does not generate text"}


class InputError(Exception):
    """Bad input from the user: reported as one line and exit status 2."""


def f32(value):
    """Rounds to float32, the precision the C code keeps its scalars in."""
    return np.float32(value)


# ---------------------------------------------------------------- command line

def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="pytorch_ddp.py", allow_abbrev=False,
        description="Train the course GPT with PyTorch DDP, ZeRO-1 or FSDP (gloo, CPU) from an "
                    "llm.c checkpoint, with lesson 00's configuration, data order and optimizer.",
        epilog="Any other flag (--layers 6 --channels 256 --seq 256 --max-seq 256 --lr X "
               "...) is a lesson 00 training flag: it is passed to '00_single_device train' "
               "to resolve the configuration. Exit status 77 when PyTorch is missing.")
    parser.add_argument("--init-from", required=True, metavar="CKPT",
                        help="llm.c-format fp32 checkpoint to start from (required)")
    parser.add_argument("--config", metavar="PRESET",
                        help="lesson 00 preset (course, reference, tiny); lesson 00's default "
                             "when left out")
    parser.add_argument("--csv", metavar="PATH", help="write per-step figures here")
    parser.add_argument("--summary", metavar="PATH", help="write a one-row summary CSV here")
    parser.add_argument("--ranks", type=int, default=2, metavar="N",
                        help="ranks (CPU processes) [2]")
    parser.add_argument("--eager", action="store_true",
                        help="one process, no DDP: plain PyTorch eager (the baseline for "
                             "lesson 00); --ranks is then 1")
    parser.add_argument("--zero1", action="store_true",
                        help="DDP with PyTorch's ZeroRedundancyOptimizer (ZeRO-1): each rank keeps "
                             "AdamW's state of its share of the parameters (strategy pytorch_zero1)")
    parser.add_argument("--fsdp", choices=sorted(FSDP_MODES), metavar="MODE",
                        help="PyTorch's FSDP instead of DDP: grad_op keeps a unit's gathered "
                             "parameters from forward to backward (SHARD_GRAD_OP, beside lesson "
                             "08), full gathers them again for backward (FULL_SHARD, beside "
                             "lesson 09); needs PyTorch 2.6 or later")
    parser.add_argument("--steps", type=int, metavar="N",
                        help="optimizer steps (the preset's when left out)")
    parser.add_argument("--lesson-binary", default=DEFAULT_LESSON_BINARY, metavar="PATH",
                        help="lesson 00 program that resolves the configuration "
                             "[build/solutions/00_single_device]")
    args, pass_through = parser.parse_known_args(argv)
    if args.eager and "--ranks" in argv:
        raise InputError("--eager runs one process: leave out --ranks")
    if args.eager and (args.zero1 or args.fsdp):
        raise InputError("--eager runs one process without a process group: "
                         f"{'--zero1' if args.zero1 else '--fsdp'} needs ranks")
    if args.zero1 and args.fsdp:
        raise InputError("--zero1 and --fsdp are two strategies: choose one")
    if args.eager:
        args.ranks = 1
    check_pass_through(pass_through)
    args.pass_through = pass_through
    return args


def check_pass_through(pass_through):
    if len(pass_through) % 2 != 0 or any(not flag.startswith("--") for flag in pass_through[0::2]):
        raise InputError("lesson 00 flags must come as '--flag value' pairs; got: "
                         + " ".join(pass_through))
    for flag in pass_through[0::2]:
        if flag in REFUSED_PASS_THROUGH:
            raise InputError(f"{flag}: {REFUSED_PASS_THROUGH[flag]}")


def check_args(args, config):
    if args.ranks < 1:
        raise InputError(f"--ranks {args.ranks}: must be at least 1")
    if config["batch"] % args.ranks != 0:
        raise InputError(f"--ranks {args.ranks}: the global batch {config['batch']} does not "
                         "divide by it")
    if config["steps"] < 1:
        raise InputError(f"--steps {config['steps']}: must be at least 1")
    inputs = [args.init_from, config["train"], config["val"]]
    for flag, output in (("--csv", args.csv), ("--summary", args.summary)):
        if output is not None and any(same_file(output, path) for path in inputs):
            raise InputError(f"{flag} {output} would overwrite an input file; choose another path")


def same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


# ---------------------------------------------------------------- configuration from lesson 00

INT_KEYS = ["vocab", "layers", "heads", "channels", "max-seq", "batch", "seq", "steps",
            "warmup", "val-every", "val-batches", "log-every", "threads"]
FLOAT_KEYS = ["lr", "beta1", "beta2", "eps", "weight-decay", "grad-clip", "min-lr-frac"]
PATH_KEYS = ["train", "val"]


def lesson_command(args, extra):
    command = [args.lesson_binary, "train"]
    if args.config is not None:
        command += ["--config", args.config]
    return command + args.pass_through + extra


def run_lesson(command):
    if not os.access(command[0], os.X_OK):
        raise InputError(f"{command[0]}: lesson 00 is not built (run 'make all data')")
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        lines = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()
        raise InputError(f"lesson 00 rejected the configuration: {lines[-1]}")
    return done.stdout


def query_config(args):
    """Every setting lesson 00 would train with, as {flag name: value}."""
    output = run_lesson(lesson_command(args, ["--dry-run"]))
    raw = {}
    for line in output.splitlines():
        if line.startswith("config "):
            parts = line[len("config "):].split(None, 1)
            raw[parts[0]] = parts[1] if len(parts) > 1 else ""
    missing = [key for key in INT_KEYS + FLOAT_KEYS + PATH_KEYS if key not in raw]
    if missing:
        raise InputError("lesson 00 did not print config lines for: " + ", ".join(missing))
    config = {key: int(raw[key]) for key in INT_KEYS}
    config.update({key: f32(float(raw[key])) for key in FLOAT_KEYS})
    config.update({key: raw[key] for key in PATH_KEYS})
    if args.steps is not None:
        config["steps"] = args.steps
    config["padded-vocab"] = (config["vocab"] + 127) // 128 * 128  # as gpt_padded_vocab
    return config


# ---------------------------------------------------------------- checkpoint and layout

def unit_tensors(config):
    """(kind, layer, shape) of every tensor in the flat unit-major order of layout.c."""
    V, C, T, L = config["padded-vocab"], config["channels"], config["max-seq"], config["layers"]
    shapes = {"wte": (V, C), "wpe": (T, C), "qkvw": (3 * C, C), "qkvb": (3 * C,),
              "attprojw": (C, C), "fcw": (4 * C, C), "fcb": (4 * C,), "fcprojw": (C, 4 * C)}
    layout = [(kind, 0, shapes[kind]) for kind in EMBEDDING_KINDS]
    for layer in range(L):
        layout += [(kind, layer, shapes.get(kind, (C,))) for kind in BLOCK_KINDS]
    layout += [(kind, 0, (C,)) for kind in FINAL_KINDS]
    return layout


def flat_offsets(config):
    """{(kind, layer): (offset, shape)} in the flat parameter buffer, and its length."""
    offsets, position = {}, 0
    for kind, layer, shape in unit_tensors(config):
        offsets[(kind, layer)] = (position, shape)
        position += math.prod(shape)
    return offsets, position


def check_checkpoint_header(path, header, config, expected_bytes):
    if header[0] != CHECKPOINT_MAGIC:
        hint = "; this is a token shard" if header[0] == SHARD_MAGIC else "; not an llm.c checkpoint"
        raise InputError(f"{path}: bad magic {header[0]} (expected {CHECKPOINT_MAGIC}){hint}")
    if header[1] != CHECKPOINT_VERSION:
        raise InputError(f"{path}: unsupported checkpoint version {header[1]} (only 3, fp32)")
    fields = [("maxT", 2, "max-seq"), ("V", 3, "vocab"), ("L", 4, "layers"),
              ("NH", 5, "heads"), ("C", 6, "channels"), ("Vp", 7, "padded-vocab")]
    for name, slot, key in fields:
        if header[slot] != config[key]:
            raise InputError(f"{path}: checkpoint has {name}={header[slot]} but the "
                             f"configuration has {name}={config[key]}")
    actual_bytes = os.path.getsize(path)
    if actual_bytes != expected_bytes:
        raise InputError(f"{path}: file is {actual_bytes} bytes but a checkpoint of this shape "
                         f"is {expected_bytes} bytes")


def load_checkpoint(path, config):
    """The checkpoint's parameters as one float32 array in the flat unit-major layout."""
    offsets, num_params = flat_offsets(config)
    try:
        header = np.fromfile(path, dtype="<i4", count=HEADER_INTS)
    except OSError as error:
        raise InputError(f"{path}: cannot open checkpoint: {error.strerror}") from None
    if header.size < HEADER_INTS:
        raise InputError(f"{path}: file is too short for the 1024-byte checkpoint header")
    check_checkpoint_header(path, header, config, 4 * HEADER_INTS + 4 * num_params)
    stored = np.fromfile(path, dtype="<f4", offset=4 * HEADER_INTS)
    flat = np.empty(num_params, dtype=np.float32)
    position = 0
    # The file is tensor-major (all layers' ln1w, then all layers' ln1b, ...).
    for kind in EMBEDDING_KINDS + BLOCK_KINDS + FINAL_KINDS:
        layers = config["layers"] if kind in BLOCK_KINDS else 1
        for layer in range(layers):
            offset, shape = offsets[(kind, layer)]
            count = math.prod(shape)
            flat[offset:offset + count] = stored[position:position + count]
            position += count
    return flat


# ---------------------------------------------------------------- token shards

def load_shard(path, config):
    """A token shard's tokens (uint16), checked like common/shard.c and dataloader.c do."""
    try:
        header = np.fromfile(path, dtype="<i4", count=HEADER_INTS)
        file_bytes = os.path.getsize(path)
    except OSError as error:
        raise InputError(f"{path}: cannot open: {error.strerror}") from None
    if header.size < HEADER_INTS:
        raise InputError(f"{path}: file is too short for the 1024-byte shard header")
    magic, version, count = (int(x) for x in header[:3])
    if magic != SHARD_MAGIC or version != SHARD_VERSION:
        raise InputError(f"{path}: not a token shard (magic {magic}, version {version})")
    if count <= 0 or file_bytes != 4 * HEADER_INTS + 2 * count:
        raise InputError(f"{path}: file is {file_bytes} bytes but the header promises {count} tokens")
    tokens = np.fromfile(path, dtype="<u2", offset=4 * HEADER_INTS)
    needed = config["batch"] * config["seq"] + 1
    if tokens.size < needed:
        raise InputError(f"{path}: shard holds {tokens.size} tokens but one global batch needs {needed}")
    if int(tokens.max()) >= config["vocab"]:
        raise InputError(f"{path}: token {int(tokens.max())} is outside the vocabulary "
                         f"(vocab size {config['vocab']})")
    return tokens


class BatchCursor:
    """Walks a shard in lesson 00's global-batch order (common/dataloader.c): global row i
    of the batch at s is tokens [s + i*T, s + i*T + T], rank r of N takes rows
    r*B/N .. (r+1)*B/N - 1, and s advances by B*T, back to 0 when a batch would not fit."""

    def __init__(self, tokens, global_batch, seq_len, rank, world):
        self.tokens, self.seq_len = tokens, seq_len
        self.local_batch = global_batch // world
        self.first_row = rank * self.local_batch
        self.global_tokens = global_batch * seq_len
        self.batch_start = 0

    def reset(self):
        self.batch_start = 0

    def next(self):
        """(inputs, targets), each local_batch x seq_len int64."""
        T, rows = self.seq_len, self.local_batch
        begin = self.batch_start + self.first_row * T
        window = self.tokens[begin:begin + rows * T + 1].astype(np.int64)
        inputs, targets = window[:-1].reshape(rows, T), window[1:].reshape(rows, T)
        self.batch_start += self.global_tokens
        if self.batch_start + self.global_tokens + 1 > self.tokens.size:
            self.batch_start = 0
        return inputs, targets


# ---------------------------------------------------------------- optimizer arithmetic (float32, as optimizer.c)

def lr_at(config, step):
    """lr_schedule() of common/optimizer.c, with its float and double roundings."""
    lr, warmup, total = config["lr"], config["warmup"], config["steps"]
    if step < warmup:
        return f32(f32(lr * f32(step + 1)) / f32(warmup))
    decay_steps = total - warmup
    if decay_steps <= 1:
        return lr
    progress = (step - warmup) / (decay_steps - 1)
    cosine = 0.5 * (1.0 + math.cos(math.pi * progress))
    min_frac = float(config["min-lr-frac"])
    return f32(float(lr) * (min_frac + (1.0 - min_frac) * cosine))


def clip_scale(norm, max_norm):
    if max_norm <= 0 or norm <= max_norm:
        return f32(1.0)
    return f32(max_norm / norm)


def bias_corrections(config, step):
    """1 / (1 - beta^step) for m and v, in float32 as adamw_update computes them."""
    one = f32(1.0)
    beta1_power = np.power(config["beta1"], f32(step))
    beta2_power = np.power(config["beta2"], f32(step))
    return one / (one - beta1_power), one / (one - beta2_power)


# ---------------------------------------------------------------- everything below needs torch

def torch_available():
    """Whether torch imports (a broken install counts as missing). The ranks are fresh
    processes, so importing it here does not fix their thread settings too early."""
    try:
        importlib.import_module("torch")
    except ImportError:
        return False
    return True


def fsdp_missing():
    """Why this torch cannot run --fsdp, or None when it can: fully_shard is public from
    PyTorch 2.6 on, and Debian 12's 1.13 fails even to import its older FSDP on Python 3.11."""
    try:
        from torch.distributed.fsdp import fully_shard, FSDPModule  # noqa: F401
    except Exception as error:  # 1.13 raises ValueError from a dataclass, not ImportError
        version = importlib.import_module("torch").__version__
        return (f"FSDP needs PyTorch 2.6 or later, and torch {version} cannot import "
                f"fully_shard ({type(error).__name__}); 'make torch' installs PyPI's torch into "
                "build/torch")
    return None


def make_model_class(torch):
    """The GPT module (defined here so that importing this file does not need torch)."""
    nn, F = torch.nn, torch.nn.functional

    def attention(qkv, heads, scale, future):
        B, T, threeC = qkv.shape
        C = threeC // 3
        q, k, v = (x.view(B, T, heads, C // heads).transpose(1, 2) for x in qkv.split(C, dim=2))
        scores = (q @ k.transpose(2, 3)) * scale
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        return (weights @ v).transpose(1, 2).reshape(B, T, C)

    class Block(nn.Module):
        """One transformer block, a unit of the flat layout: its own module, so that FSDP
        can make it a unit of its own too, gathered around its forward and backward."""

        def __init__(self, heads, scale):
            super().__init__()
            self.heads, self.scale = heads, scale

        def forward(self, x, future):
            p = lambda kind: getattr(self, kind)
            C = x.shape[-1]
            h = F.layer_norm(x, (C,), p("ln1w"), p("ln1b"), LAYERNORM_EPS)
            qkv = F.linear(h, p("qkvw"), p("qkvb"))
            x = x + F.linear(attention(qkv, self.heads, self.scale, future), p("attprojw"), p("attprojb"))
            h = F.layer_norm(x, (C,), p("ln2w"), p("ln2b"), LAYERNORM_EPS)
            h = F.gelu(F.linear(h, p("fcw"), p("fcb")), approximate="tanh")
            return x + F.linear(h, p("fcprojw"), p("fcprojb"))

    class GPT(nn.Module):
        """GPT-2 as common/model.c computes it; every parameter is a view of one flat
        buffer in the C unit-major layout, so AdamW runs on that buffer in a few ops. The
        embeddings and the final LayerNorm belong to the model itself, each block's
        parameters to its Block."""

        def __init__(self, config, flat_params):
            super().__init__()
            self.vocab = config["vocab"]
            # 1.0f / sqrtf(hs): exactly representable, so the float32 product matches
            scale = float(f32(1.0) / np.sqrt(f32(config["channels"] // config["heads"])))
            self.blocks = nn.ModuleList(Block(config["heads"], scale) for _ in range(config["layers"]))
            self.future_masks = {}  # T -> the T x T mask of positions after each query
            offsets, _ = flat_offsets(config)
            self.layout = []  # (module, name) of every parameter in flat layout order
            for kind, layer, shape in unit_tensors(config):
                offset, _ = offsets[(kind, layer)]
                view = flat_params[offset:offset + math.prod(shape)].view(shape)
                owner = self.blocks[layer] if kind in BLOCK_KINDS else self
                owner.register_parameter(kind, nn.Parameter(view))  # shares the flat buffer's storage
                self.layout.append((owner, kind))

        def layout_parameters(self):
            """The parameters in flat layout order, looked up each time: FSDP replaces each
            with its shard."""
            return [getattr(owner, kind) for owner, kind in self.layout]

        def future_mask(self, T):
            if T not in self.future_masks:
                self.future_masks[T] = torch.ones(T, T, dtype=torch.bool).triu(1)
            return self.future_masks[T]

        def forward(self, inputs, targets):
            """Mean cross-entropy over every position of this batch."""
            T = inputs.shape[1]
            x = self.wte[inputs] + self.wpe[:T]
            for block in self.blocks:
                x = block(x, self.future_mask(T))
            x = F.layer_norm(x, (x.shape[-1],), self.lnfw, self.lnfb, LAYERNORM_EPS)
            # tied LM head over the V real rows only: the padding rows are not logits
            logits = F.linear(x, self.wte[:self.vocab])
            return F.cross_entropy(logits.reshape(-1, self.vocab), targets.reshape(-1))

    return GPT


def adamw_update(params, grads, m, v, cfg, step_count, lr, grad_scale):
    """adamw_update() of common/kernels_cpu.c on one buffer and its state, operation by
    operation in float32 so that every element rounds as the C loop does."""
    m_correction, v_correction = bias_corrections(cfg, step_count)
    g = grads * float(grad_scale)
    m.mul_(float(cfg["beta1"])).add_(g * float(f32(1.0) - cfg["beta1"]))
    v.mul_(float(cfg["beta2"])).add_((g * float(f32(1.0) - cfg["beta2"])) * g)
    m_hat = m * float(m_correction)
    v_hat = v * float(v_correction)
    # decoupled weight decay on every parameter, inside the lr product as in C
    update = m_hat / (v_hat.sqrt() + float(cfg["eps"])) + params * float(cfg["weight-decay"])
    params.sub_(update * float(lr))


class AdamW:
    """The course's AdamW on the tensors this rank updates, with their m and v: the flat
    buffer whole (DDP and eager: every rank keeps all of m, v), or under FSDP the rank's
    shard of each parameter (m and v exist for the shard alone). Elementwise, so each
    element is updated as in the flat buffer either way."""

    def __init__(self, torch, tensors, config):
        self.tensors = tensors  # () -> the tensors to update, looked up at each step
        with torch.no_grad():
            self.m = [torch.zeros_like(tensor) for tensor in tensors()]
            self.v = [torch.zeros_like(tensor) for tensor in tensors()]
        self.config = config
        self.step_count = 0

    def step(self, gradients, lr, grad_scale):
        self.step_count += 1
        for params, grads, m, v in zip(self.tensors(), gradients, self.m, self.v):
            adamw_update(params, grads, m, v, self.config, self.step_count, lr, grad_scale)

    def state_bytes(self):
        return sum(4 * (m.numel() + v.numel()) for m, v in zip(self.m, self.v))


def make_sharded_adamw(torch):
    """PyTorch's ZeRO-1, ZeroRedundancyOptimizer, over the course's AdamW: it gives each rank
    whole parameters (greedily, largest first, to even out the bytes), the rank keeps m and v
    of those alone, steps them, and broadcasts them to the others after the step."""

    class CourseAdamW(torch.optim.Optimizer):
        """The same arithmetic per parameter (elementwise, so each element rounds as in the
        flat buffer); lr and the clipping scale come in the param group each step."""

        def __init__(self, params, config, lr=0.0, grad_scale=1.0):
            super().__init__(params, {"lr": lr, "grad_scale": grad_scale})
            self.config = config
            self.step_count = 0

        @torch.no_grad()
        def step(self, closure=None):
            self.step_count += 1
            for group in self.param_groups:
                for p in group["params"]:
                    state = self.state[p]
                    if not state:
                        state["m"], state["v"] = torch.zeros_like(p), torch.zeros_like(p)
                    adamw_update(p, p.grad, state["m"], state["v"], self.config, self.step_count,
                                 group["lr"], group["grad_scale"])

    class ShardedAdamW:
        def __init__(self, parameters, config):
            from torch.distributed.optim import ZeroRedundancyOptimizer
            self.zero = ZeroRedundancyOptimizer(parameters, optimizer_class=CourseAdamW, config=config)

        def step(self, gradients, lr, grad_scale):
            del gradients  # each parameter's .grad holds its part, averaged by DDP
            for group in self.zero.param_groups:
                group["lr"], group["grad_scale"] = float(lr), float(grad_scale)
            self.zero.step()

        def state_bytes(self):
            return sum(4 * tensor.numel() for state in self.zero.optim.state.values()
                       for tensor in state.values())

    return ShardedAdamW


def shard_with_fsdp(torch, model, mode):
    """FSDP2's fully_shard on each block, then on the model (the embeddings and the final
    LayerNorm, and the root that starts and ends every step). reshard_after_forward False
    keeps a unit's gathered parameters until its backward (SHARD_GRAD_OP), True frees them
    after forward and gathers them again for backward (FULL_SHARD)."""
    from torch.distributed.fsdp import fully_shard
    reshard_after_forward = FSDP_MODES[mode][0]
    for block in model.blocks:
        fully_shard(block, reshard_after_forward=reshard_after_forward)
    fully_shard(model, reshard_after_forward=reshard_after_forward)


# ---------------------------------------------------------------- one rank

class Rank:
    """One process: its model replica (or, under FSDP, its shard of the model), data cursors
    and optimizer. Eager (one process, no process group): the model itself stands where
    DDP's wrapper would."""

    def __init__(self, torch, rank, settings):
        self.torch, self.rank, self.settings = torch, rank, settings
        self.config = config = settings["config"]
        self.world = settings["ranks"]
        torch.set_num_threads(config["threads"])
        torch.set_num_interop_threads(1)
        self.flat_params = torch.from_numpy(load_checkpoint(settings["init_from"], config))
        model = make_model_class(torch)(config, self.flat_params)
        self.model = model
        self.eager, self.fsdp = settings["eager"], settings["fsdp"]
        if self.fsdp:
            shard_with_fsdp(torch, model, self.fsdp)
            self.wrapped = model  # fully_shard changes the module in place
        else:
            self.wrapped = model if self.eager else torch.nn.parallel.DistributedDataParallel(model)
        self.optimizer = (make_sharded_adamw(torch)(model.layout_parameters(), config)
                          if settings["zero1"] else AdamW(torch, self.updated_tensors, config))
        self.train = BatchCursor(load_shard(config["train"], config), config["batch"],
                                 config["seq"], rank, self.world)
        self.val = None
        if config["val-every"] > 0:
            self.val = BatchCursor(load_shard(config["val"], config), config["batch"],
                                   config["seq"], rank, self.world)

    def local(self, tensor):
        """This rank's part of a parameter or of its gradient: under FSDP its shard (FSDP
        keeps each as a DTensor sharded by rows), otherwise the whole tensor."""
        return tensor.to_local() if self.fsdp else tensor

    def updated_tensors(self):
        """What AdamW updates on this rank: under FSDP its shard of each parameter, otherwise
        the flat buffer every parameter is a view of."""
        if self.fsdp:
            return [self.local(parameter) for parameter in self.model.layout_parameters()]
        return [self.flat_params]

    def gradients(self):
        """The averaged gradient, matching updated_tensors(): each parameter's shard, or the
        flat buffer's layout in one tensor."""
        grads = [self.local(parameter.grad) for parameter in self.model.layout_parameters()]
        return grads if self.fsdp else [self.torch.cat([grad.reshape(-1) for grad in grads])]

    def grad_norm(self, gradients):
        """The norm of the averaged gradient, summed in double like sum_of_squares(); under
        FSDP each rank sums its shards and the ranks add their sums."""
        total = sum(part.double().square().sum() for part in gradients).reshape(1)
        if self.fsdp:
            self.torch.distributed.all_reduce(total)
        return f32(math.sqrt(total.item()))

    def train_step(self, step):
        """One step as trainer_step() does it; returns (local loss, grad norm, lr, seconds).
        DDP and FSDP average the gradients over the ranks during backward."""
        torch = self.torch
        start = time.perf_counter()
        inputs, targets = self.train.next()
        self.wrapped.zero_grad(set_to_none=True)
        loss = self.wrapped(torch.from_numpy(inputs), torch.from_numpy(targets))
        loss.backward()
        gradients = self.gradients()
        grad_norm = self.grad_norm(gradients)
        lr = lr_at(self.config, step)
        with torch.no_grad():
            self.optimizer.step(gradients, lr, clip_scale(grad_norm, self.config["grad-clip"]))
        return loss.item(), grad_norm, lr, time.perf_counter() - start

    def global_mean(self, local_value):
        """Mean of one number over the ranks (their batches are the same size)."""
        if self.eager:
            return local_value
        total = self.torch.tensor([local_value], dtype=self.torch.float64)
        self.torch.distributed.all_reduce(total)
        return total.item() / self.world

    def validate(self):
        """trainer_validate(): the first val-batches batches of the val shard, every time."""
        self.val.reset()
        total = 0.0
        with self.torch.no_grad():
            for _ in range(self.config["val-batches"]):
                inputs, targets = self.val.next()
                local = self.wrapped(self.torch.from_numpy(inputs), self.torch.from_numpy(targets))
                total += float(f32(self.global_mean(local.item())))
        if self.fsdp:
            self.reshard()
        return float(f32(total / self.config["val-batches"]))

    def reshard(self):
        """A forward without backward can leave FSDP's gathered parameters in place (there
        is no backward to free them after); free them, so that between steps every rank
        keeps its shards alone."""
        from torch.distributed.fsdp import FSDPModule
        for module in self.model.modules():
            if isinstance(module, FSDPModule):
                module.reshard()

    def is_val_step(self, step):
        every, steps = self.config["val-every"], self.config["steps"]
        return self.val is not None and ((step + 1) % every == 0 or step + 1 == steps)

    def model_state_mb(self):
        """Parameters, gradients and AdamW state this rank keeps between steps (MB), each the
        largest over the ranks: ZeRO-1's shares of whole parameters are not all the same
        size, and FSDP's row shards need not be either."""
        parameters = self.model.layout_parameters()
        params = sum(4 * self.local(p).numel() for p in parameters)
        grads = sum(4 * self.local(p.grad).numel() for p in parameters if p.grad is not None)
        figures = self.torch.tensor([params, grads, self.optimizer.state_bytes()],
                                    dtype=self.torch.float64)
        if not self.eager:
            self.torch.distributed.all_reduce(figures, op=self.torch.distributed.ReduceOp.MAX)
        return [value / 1e6 for value in figures.tolist()]

    def slowest(self, seconds):
        """Per-step wall times, the slowest rank's for each step (one collective at the end,
        so that timing does not add a synchronisation to every step)."""
        if self.eager:
            return seconds
        times = self.torch.tensor(seconds, dtype=self.torch.float64)
        self.torch.distributed.all_reduce(times, op=self.torch.distributed.ReduceOp.MAX)
        return times.tolist()


def log_step(config, step, row):
    steps = config["steps"]
    has_val = row["val_loss"] is not None
    if (step + 1) % config["log-every"] == 0 or step == 0 or step + 1 == steps or has_val:
        line = (f"step {step + 1:5d}/{steps} | loss {row['loss']:.6f} | grad norm "
                f"{row['grad_norm']:.6f} | lr {row['lr']:.3e} | {1e3 * row['seconds']:7.2f} ms "
                f"(rank 0) | {row['tokens_per_s']:8.0f} tok/s")
        print(line + (f" | val loss {row['val_loss']:.6f}" if has_val else ""), flush=True)


def train_rank(rank, settings, init_file):
    import torch
    import torch.distributed as dist
    if not settings["eager"]:
        dist.init_process_group("gloo", init_method="file://" + init_file,
                                rank=rank, world_size=settings["ranks"])
    worker = Rank(torch, rank, settings)
    config = worker.config
    tokens_per_step = config["batch"] * config["seq"]
    rows = []
    for step in range(config["steps"]):
        local_loss, grad_norm, lr, seconds = worker.train_step(step)
        row = {"loss": float(f32(worker.global_mean(local_loss))), "grad_norm": float(grad_norm),
               "lr": float(lr), "seconds": seconds, "tokens_per_s": tokens_per_step / seconds,
               "val_loss": worker.validate() if worker.is_val_step(step) else None}
        rows.append(row)
        if rank == 0:
            log_step(config, step, row)
    for row, seconds in zip(rows, worker.slowest([row["seconds"] for row in rows])):
        row["seconds"], row["tokens_per_s"] = seconds, tokens_per_step / seconds
    memory = worker.model_state_mb()
    if rank == 0:
        write_outputs(settings, rows, peak_rss_mb(), memory)
    if not settings["eager"]:
        leave_without_teardown(dist)


def leave_without_teardown(dist):
    """Ends the rank once every rank is done. torch 1.13 can deadlock when DDP's reducer
    frees the gloo process group: the destructor joins gloo's worker thread while holding
    the GIL, and that thread may be freeing a tensor, which needs the GIL (seen at 4 ranks).
    Nothing is left to save, so the process exits without running any destructor."""
    dist.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def peak_rss_mb():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # ru_maxrss is KiB


# ---------------------------------------------------------------- outputs (rank 0)

def fmt(value):
    """%.9g, lesson 00's CSV format for loss, grad norm and lr."""
    return f"{value:.9g}"


def write_csv(path, rows):
    lines = [CSV_HEADER]
    for step, row in enumerate(rows, start=1):
        val = "" if row["val_loss"] is None else fmt(row["val_loss"])
        lines.append(f"{step},{fmt(row['loss'])},{fmt(row['grad_norm'])},{fmt(row['lr'])},"
                     f"{1e3 * row['seconds']:.4f},{row['tokens_per_s']:.1f},{val}")
    write_atomically(path, "\n".join(lines) + "\n")


def strategy_name(settings):
    if settings["eager"]:
        return "pytorch_eager"
    if settings["fsdp"]:
        return FSDP_MODES[settings["fsdp"]][1]
    return "pytorch_zero1" if settings["zero1"] else "pytorch_ddp"


def summary_fields(settings, rows, peak_rss_mb, memory):
    config = settings["config"]
    warmup = min(5, len(rows) // 2)
    measured = [row["seconds"] for row in rows[warmup:]]
    average = statistics.fmean(measured)
    spread = statistics.stdev(measured) if len(measured) > 1 else 0.0
    tokens_per_s = config["batch"] * config["seq"] / average
    # DDP overlaps its all-reduce with backward inside autograd and exposes no timing for
    # it, so the communication columns stay empty instead of holding a guess.
    comm = ["", "", "", ""]
    return ([strategy_name(settings), str(settings["ranks"]), str(config["threads"]), str(len(measured)),
             f"{average:.6f}", f"{spread:.6f}"] + comm +
            [f"{tokens_per_s:.1f}", f"{peak_rss_mb:.1f}", fmt(rows[-1]["loss"])] +
            [f"{mb:.6f}" for mb in memory])


def write_outputs(settings, rows, peak_rss_mb, memory):
    if settings["csv"] is not None:
        write_csv(settings["csv"], rows)
    fields = summary_fields(settings, rows, peak_rss_mb, memory)
    print(f"summary: {fields[1]} ranks x {fields[2]} thread(s) | step {float(fields[4]) * 1e3:.2f} "
          f"+- {float(fields[5]) * 1e3:.2f} ms over {fields[3]} steps | {fields[10]} tok/s | "
          f"peak RSS rank 0 {fields[11]} MB", flush=True)
    print(f"model state/rank (MB): params {memory[0]:.3f} + grads {memory[1]:.3f} + AdamW m, v "
          f"{memory[2]:.3f} (the largest rank's each)", flush=True)
    if settings["summary"] is not None:
        write_atomically(settings["summary"], SUMMARY_HEADER + "\n" + ",".join(fields) + "\n")


# ---------------------------------------------------------------- launcher

def check_inputs(args, config):
    """Everything a rank would reject, checked once before any process starts."""
    check_args(args, config)
    load_checkpoint(args.init_from, config)
    load_shard(config["train"], config)
    if config["val-every"] > 0:
        load_shard(config["val"], config)
    for flag, path in (("--csv", args.csv), ("--summary", args.summary)):
        if path is not None:
            check_output_path(flag, path)


def check_output_path(flag, path):
    """An output is renamed into its folder once written (write_atomically): find out before
    the run that the folder takes it, without creating or touching a file at path."""
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise InputError(f"{flag} {path}: there is no folder {folder}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"{flag} {path}: cannot write into {folder}")
    if os.path.exists(path) and not os.path.isfile(path):
        raise InputError(f"{flag} {path}: exists and is not a regular file")


def describe(torch, args, config):
    how = "eager, one process" if args.eager else f"{args.ranks} ranks over gloo"
    if args.zero1:
        how += ", AdamW state sharded (ZeroRedundancyOptimizer)"
    if args.fsdp:
        how += (f", FSDP instead of DDP (fully_shard per block, reshard_after_forward="
                f"{FSDP_MODES[args.fsdp][0]})")
    print(f"pytorch_ddp: {how} x {config['threads']} thread(s) | torch "
          f"{torch.__version__} | BLAS {blas_name(torch)}")
    print(f"model L{config['layers']} H{config['heads']} C{config['channels']} "
          f"T{config['seq']} B{config['batch']} V{config['vocab']} | {config['steps']} steps "
          f"from {args.init_from}", flush=True)


def blas_name(torch):
    """Which BLAS runs torch's matrix products. PyPI's torch carries MKL inside it; Debian's
    is built against the generic libblas.so.3, which on our machines is OpenBLAS: when it
    is, name the kernel set OpenBLAS picked (OPENBLAS_CORETYPE decides it, as for the C
    programs)."""
    found = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    built_with = found.group(1) if found else "unknown"
    if built_with == "mkl":
        return "MKL"
    try:
        import ctypes
        openblas = ctypes.CDLL("libopenblas.so.0")
        openblas.openblas_get_corename.restype = ctypes.c_char_p
        return "OpenBLAS core " + openblas.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return built_with


def launch(args, config):
    # Thread counts must be in the environment before torch (and the BLAS it loads) starts
    # in each rank: OpenBLAS reads its own at load time and ignores torch.set_num_threads.
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(config["threads"])
    import torch
    import torch.multiprocessing as mp
    describe(torch, args, config)
    settings = {"config": config, "ranks": args.ranks, "init_from": args.init_from,
                "csv": args.csv, "summary": args.summary, "eager": args.eager, "zero1": args.zero1,
                "fsdp": args.fsdp}
    if args.eager:
        train_rank(0, settings, None)
        return
    with tempfile.TemporaryDirectory(prefix="pytorch_ddp.") as rendezvous_dir:
        init_file = os.path.join(rendezvous_dir, "rendezvous")
        mp.spawn(train_rank, args=(settings, init_file), nprocs=args.ranks, join=True)


def main(argv):
    try:
        args = parse_args(argv)
        if not torch_available():
            print(f"{PROG}: skipped: python3-torch is not installed (apt-get install python3-torch)")
            return SKIP_EXIT
        why_no_fsdp = fsdp_missing() if args.fsdp else None
        if why_no_fsdp:
            print(f"{PROG}: skipped: {why_no_fsdp}")
            return SKIP_EXIT
        config = query_config(args)
        check_inputs(args, config)
    except InputError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 2
    launch(args, config)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
