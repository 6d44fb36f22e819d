#!/usr/bin/env python3
"""Diffs two heap_sites dumps: which allocation stacks grew between them.

report.py EARLY.txt LATE.txt [--top N]

Prints the live heap of both dumps, the stacks whose live bytes grew most,
and the frames by inclusive growth (every stack that holds a frame adds its
growth to it). Frames are named as well as the modules allow: the app's
binary and system libraries by their symbols (addr2line, nm -D); libcef.so,
which ships without symbols, by its function's start and the strings that
function uses (Chromium's trace-event names, base::Location file names,
log texts), which is usually enough to find the function in Chromium's
sources. See soak/heap-sites/README.md.
"""

import bisect
import re
import struct
import subprocess
import sys
from collections import defaultdict


def parse(path):
    header, sites, maps = {}, {}, []
    in_maps = False
    with open(path) as f:
        for line in f:
            if line.startswith("# maps"):
                in_maps = True
                continue
            if in_maps:
                m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s*(.*)", line)
                if m and "x" in m.group(3):
                    maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(4), 16), m.group(5).strip()))
                continue
            if line.startswith("# secs"):
                parts = line[2:].split()
                header = {parts[i]: int(parts[i + 1]) for i in range(0, len(parts) - 1, 2)}
                continue
            if line.startswith("#"):
                continue
            parts = line.split()
            live, blocks, allocs = int(parts[0]), int(parts[1]), int(parts[2])
            frames = tuple(int(x, 16) for x in parts[3:])
            prev = sites.get(frames)
            if prev:  # slot 0 (overflow) may share a stack
                live, blocks, allocs = live + prev[0], blocks + prev[1], allocs + prev[2]
            sites[frames] = (live, blocks, allocs)
    return header, sites, maps


class Elf:
    """PT_LOAD segments of one file, to turn file offsets into addresses."""

    def __init__(self, path):
        self.path = path
        self.loads = []
        with open(path, "rb") as f:
            ident = f.read(64)
            phoff, = struct.unpack_from("<Q", ident, 0x20)
            phentsize, phnum = struct.unpack_from("<HH", ident, 0x36)
            f.seek(phoff)
            for _ in range(phnum):
                ph = f.read(phentsize)
                p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", ph)
                if p_type == 1:
                    self.loads.append((p_offset, p_vaddr, p_filesz))
        self.fh = open(path, "rb")

    def vaddr(self, off):
        for p_offset, p_vaddr, p_filesz in self.loads:
            if p_offset <= off < p_offset + p_filesz:
                return off - p_offset + p_vaddr
        return off

    def file_off(self, vaddr):
        for p_offset, p_vaddr, p_filesz in self.loads:
            if p_vaddr <= vaddr < p_vaddr + p_filesz:
                return vaddr - p_vaddr + p_offset
        return None

    def read(self, vaddr, n):
        off = self.file_off(vaddr)
        if off is None:
            return b""
        self.fh.seek(off)
        return self.fh.read(n)


class Namer:
    def __init__(self, maps):
        self.maps = sorted(maps)
        self.starts = [m[0] for m in self.maps]
        self.elves = {}
        self.cache = {}
        self.dynsyms = {}

    def module(self, addr):
        i = bisect.bisect_right(self.starts, addr) - 1
        if i < 0:
            return None, 0
        start, end, off, path = self.maps[i]
        if not (start <= addr < end):
            return None, 0
        return path, addr - start + off

    def elf(self, path):
        if path not in self.elves:
            try:
                self.elves[path] = Elf(path)
            except OSError:
                self.elves[path] = None
        return self.elves[path]

    def name(self, addr):
        if addr in self.cache:
            return self.cache[addr]
        path, off = self.module(addr)
        if path is None:
            text = f"{addr:#x}"
        else:
            elf = self.elf(path)
            va = elf.vaddr(off) if elf else off
            base = path.rsplit("/", 1)[-1]
            if base == "libcef.so":
                text = self.cef(elf, va)
            elif base.startswith("termsprawl"):
                text = f"{self.addr2line(path, va - 1)} [{base}]"
            else:
                text = f"{self.dynsym(path, va)} [{base}]"
        self.cache[addr] = text
        return text

    def addr2line(self, path, va):
        out = subprocess.run(["addr2line", "-f", "-C", "-e", path, f"{va:#x}"], capture_output=True, text=True).stdout.split("\n")
        fn = out[0] if out else "??"
        fn = re.sub(r"::h[0-9a-f]{16}$", "", fn)
        return fn

    def dynsym(self, path, va):
        if path not in self.dynsyms:
            syms = []
            out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[1] in "TtWi":
                    syms.append((int(parts[0], 16), parts[2]))
            syms.sort()
            self.dynsyms[path] = syms
        syms = self.dynsyms[path]
        i = bisect.bisect_right(syms, (va, "\uffff")) - 1
        return f"{syms[i][1]}+{va - syms[i][0]:#x}" if i >= 0 else f"{va:#x}"

    def cef(self, elf, ret):
        """libcef has no symbols: its function's start and the strings it uses."""
        window = 1 << 16
        lo = max(ret - window, 0)
        code = elf.read(lo, ret - lo)
        start = code.rfind(b"\x55\x48\x89\xe5")  # push %rbp; mov %rsp,%rbp
        fstart = lo + start if start >= 0 else ret - 64
        # The function ends where the next one's prologue starts.
        after = elf.read(ret, 1 << 14)
        nxt = after.find(b"\x55\x48\x89\xe5")
        fend = ret + (nxt if nxt >= 0 else 256)
        out = subprocess.run(
            ["objdump", "-d", "--no-show-raw-insn", f"--start-address={fstart:#x}", f"--stop-address={fend:#x}", elf.path],
            capture_output=True,
            text=True,
        ).stdout
        strings = []
        for m in re.finditer(r"# ([0-9a-f]+)", out):
            s = self.cstring(elf, int(m.group(1), 16))
            if s and s not in strings:
                strings.append(s)
        pick = [s for s in strings if "::" in s or s.startswith("../../")] + [s for s in strings if not ("::" in s or s.startswith("../../"))]
        hint = " | ".join(pick[:4]) if pick else "-"
        return f"libcef+{fstart:#x}(+{ret - fstart:#x}) {hint}"

    @staticmethod
    def cstring(elf, va):
        data = elf.read(va, 160)
        end = data.find(b"\0")
        if end < 4:
            return None
        s = data[:end]
        if all(32 <= c < 127 for c in s):
            return s.decode()
        return None


def own(text):
    return "heap_sites.so" in text


def main():
    args = sys.argv[1:]
    top = 25
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    h1, s1, _ = parse(args[0])
    h2, s2, maps = parse(args[1])
    namer = Namer(maps)
    minutes = (h2["secs"] - h1["secs"]) / 60
    mib = 1 << 20
    print(f"live heap of libcef's allocations: {h1['live_bytes'] / mib:.2f} MiB at {h1['secs']} s, {h2['live_bytes'] / mib:.2f} MiB at {h2['secs']} s")
    d = (h2["live_bytes"] - h1["live_bytes"]) / mib
    print(f"growth {d:+.3f} MiB over {minutes:.1f} min = {d / minutes:+.3f} MiB/min; blocks {h1['live_blocks']} -> {h2['live_blocks']}; sites {h2['sites']}, lost sites {h2['lost_sites']}, lost blocks {h2['lost_ptrs']}")

    deltas = []
    for frames in set(s1) | set(s2):
        a = s1.get(frames, (0, 0, 0))
        b = s2.get(frames, (0, 0, 0))
        deltas.append((b[0] - a[0], b[1] - a[1], b[2] - a[2], frames))
    deltas.sort(reverse=True)

    def show(frames, limit=14):
        shown = 0
        for addr in frames:
            text = namer.name(addr)
            if own(text):
                continue
            print(f"      {text}")
            shown += 1
            if shown == limit:
                break

    print(f"\n== stacks by growth of live bytes (top {top}) ==")
    for dbytes, dblocks, dallocs, frames in deltas[:top]:
        print(f"  {dbytes / 1024:+9.1f} KiB  {dblocks:+7d} blocks  {dallocs:+8d} allocs")
        show(frames)

    inclusive = defaultdict(lambda: [0, 0])
    for dbytes, dblocks, _, frames in deltas:
        for addr in set(frames):
            inclusive[addr][0] += dbytes
            inclusive[addr][1] += dblocks
    ranked = sorted(inclusive.items(), key=lambda kv: -kv[1][0])
    print(f"\n== frames by inclusive growth (top {top * 2}) ==")
    shown = 0
    for addr, (dbytes, dblocks) in ranked:
        text = namer.name(addr)
        if own(text):
            continue
        print(f"  {dbytes / 1024:+9.1f} KiB  {dblocks:+7d} blocks  {text}")
        shown += 1
        if shown == top * 2:
            break


if __name__ == "__main__":
    main()
