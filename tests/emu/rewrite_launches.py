#!/usr/bin/env python3
"""Rewrites a .cu file for the emulated GPU (tests/emu): each launch
kernel<<<grid, block, 0, stream>>>(args) becomes emu_launch("kernel", grid, block, stream,
kernel, args); each __device__ variable is declared to the emulation after its definition;
and each block's first thread fills the __shared__ arrays with NaNs as it declares them, so
that reading shared memory nobody in the block wrote gives NaNs (the emulation keeps one
copy for all blocks). Line numbers stay those of the .cu file.

What the emulation cannot run, it does not forbid: a launch with dynamic shared memory
(a third launch argument other than 0, read through an `extern __shared__` array) becomes
emu_cannot_run("kernel", why, launch arguments, args), which skips the test that reaches it,
saying so; the kernel is tested on real GPUs only. Its `extern __shared__` array becomes a
null pointer, so that the kernel still compiles.
Usage: rewrite_launches.py IN.cu OUT.cpp"""
import re
import sys


def split_top_level(text):
    parts, depth, current = [], 0, ''
    for ch in text:
        if ch in '([':
            depth += 1
        elif ch in ')]':
            depth -= 1
        if ch == ',' and depth == 0:
            parts.append(current.strip())
            current = ''
        else:
            current += ch
    return parts + [current.strip()]


def rewrite_launches(source):
    out, position = [], 0
    for match in re.finditer(r'(\w+)<<<', source):
        if match.start() < position:
            continue
        end = source.index('>>>(', match.end())
        config = split_top_level(source[match.end():end])
        if len(config) != 4:
            sys.exit('rewrite_launches: %s: expected <<<grid, block, shared bytes, stream>>>' % match.group(1))
        grid, block, shared, stream = config
        out.append(source[position:match.start()])
        if shared != '0':
            out.append('emu_cannot_run("%s", "dynamic shared memory (%s bytes a block)", %s, %s, %s, %s, '
                       % (match.group(1), shared.replace('"', "'"), grid, block, shared, stream))
        else:
            out.append('emu_launch("%s", %s, %s, %s, %s, ' % (match.group(1), grid, block, stream, match.group(1)))
        position = end + len('>>>(')
    out.append(source[position:])
    return ''.join(out)


def declare_device_variables(source):
    def declare(match):
        name = match.group(2)
        return '%s static EmuSymbol emu_symbol_%s(&%s, sizeof %s);' % (match.group(0), name, name, name)
    return re.sub(r'^__device__ ([\w ]+?) (\w+)(\[[^\]]*\])?;', declare, source, flags=re.M)


def null_dynamic_shared_arrays(source):
    return re.sub(r'extern __shared__ ([\w ]+?) (\w+)\[\];', r'\1 *\2 = nullptr;', source)


def poison_shared_arrays(source):
    def poison(match):
        names = [declarator.split('[')[0].strip() for declarator in split_top_level(match.group(2))]
        fills = ' '.join('memset(%s, 0xff, sizeof %s);' % (name, name) for name in names)
        return '%s if (threadIdx.x + threadIdx.y + threadIdx.z == 0) { %s }' % (match.group(0), fills)
    return re.sub(r'__shared__ ([\w ]+?) (\w+\[[^;]*);', poison, source)


def main():
    source = open(sys.argv[1]).read()
    with open(sys.argv[2], 'w') as out:
        out.write('#line 1 "%s"\n' % sys.argv[1])
        out.write(poison_shared_arrays(null_dynamic_shared_arrays(declare_device_variables(rewrite_launches(source)))))


main()
