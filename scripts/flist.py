#!/usr/bin/env python3
"""Read an RTL file list (.f) the way every tool of the project does.

Format: one path per line, relative to the repository root; `-f <list>` includes another list at that
place; '#' and '//' start comments; a file reached twice is kept at its first place only. The same rules
are the only implementation: CMake's tmnic_read_filelist() (cmake/rtl_sources.cmake) runs this script.

Usage: flist.py <list.f>           prints the flattened paths, one per line (exit 1 on a missing file or a cycle)
       flist.py --lists <list.f>   prints the file lists it reads (the list and those it includes)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


class FileListError(Exception):
    pass


def read(path, _stack=(), lists=None):
    """Flattened paths (repository-relative strings) of the list at `path` (absolute or repository-relative).
    `lists`, if given, collects the repository-relative paths of the lists read."""
    p = pathlib.Path(path)
    p = p if p.is_absolute() else ROOT / p
    rel = p.relative_to(ROOT).as_posix()
    if rel in _stack:
        raise FileListError(f"{rel}: includes itself through {' -> '.join(_stack)}")
    if not p.is_file():
        raise FileListError(f"{rel}: no such file list" + (f" (included by {_stack[-1]})" if _stack else ""))
    if lists is not None and rel not in lists:
        lists.append(rel)
    out = []
    for n, line in enumerate(p.read_text().splitlines(), 1):
        line = re.sub(r"(#|//).*", "", line).strip()
        if not line:
            continue
        if line.startswith("-f"):
            out += read(line[2:].strip(), _stack + (rel,), lists)
        elif (ROOT / line).is_file():
            out.append(line)
        else:
            raise FileListError(f"{rel}:{n}: {line}: no such file")
    return list(dict.fromkeys(out))


def main():
    args = sys.argv[1:]
    want_lists = args[:1] == ["--lists"]
    args = args[1:] if want_lists else args
    if len(args) != 1:
        sys.exit(__doc__)
    try:
        lists = []
        files = read(args[0], lists=lists)
        print("\n".join(lists if want_lists else files))
    except FileListError as e:
        sys.exit(f"flist: {e}")


if __name__ == "__main__":
    main()
