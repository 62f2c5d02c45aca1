#!/usr/bin/env python3
"""Turns an `strace -f -y` log of one save into the operations on files under one directory, one a line.

    normalize.py DIR < strace.log

Only paths inside DIR are kept, named relative to it; reads, stats and opens of other paths are dropped, as are
opens for reading only of a directory (listings). Consecutive writes through one descriptor become one line with
their total size. The operations are those a FUSE filesystem sees (docs/writing.md, "Local first").
"""
import os
import re
import sys

root = sys.argv[1].rstrip("/")
pending = {}  # pid -> the start of a call strace split into "<unfinished ...>" and "<... resumed>"
call = re.compile(r"^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+|\?)(.*)$")


def inside(path):
    return path == root or path.startswith(root + "/")


def rel(path):
    return "." if path == root else path[len(root) + 1 :]


def fdpath(arg):
    m = re.match(r"^(?:-?\d+|AT_FDCWD)<(.*)>$", arg.strip())
    return m.group(1) if m else None


def strings(args):
    return re.findall(r'"((?:[^"\\]|\\.)*)"', args)


def resolve(dirarg, name):
    """The absolute path of `name` relative to the directory descriptor `dirarg` (None: the working directory)."""
    if name.startswith("/"):
        return os.path.normpath(name)
    # With -y, strace shows AT_FDCWD as the working directory at the time of the call.
    d = fdpath(dirarg) if dirarg is not None else None
    return os.path.normpath((d if d is not None else cwd) + "/" + name)


out = []
last_write = None  # the path the previous line wrote to, if it was a write
cwd = root


def emit(line, written=None):
    """Appends a line; `written` = (path, bytes) adds to the previous line if it wrote through the same file."""
    global last_write
    if written is not None and last_write == written[0]:
        text, size = out[-1]
        out[-1] = (text, size + written[1])
        return
    out.append((line, written[1] if written else 0))
    last_write = written[0] if written else None


for raw in sys.stdin:
    raw = raw.rstrip("\n")
    m = re.match(r"^(\d+)\s+(.*)<unfinished \.\.\.>$", raw)
    if m:
        pending[m.group(1)] = m.group(2)
        continue
    m = re.match(r"^(\d+)\s+<\.\.\. \w+ resumed>(.*)$", raw)
    if m:
        raw = m.group(1) + " " + pending.pop(m.group(1), "") + m.group(2)
    m = call.match(raw)
    if not m:
        continue
    pid, name, args, result, rest = m.groups()
    failed = result.startswith("-") or result == "?"
    ok = "" if not failed else " -> " + (rest.split()[0] if rest.split() else "error")
    parts = [a.strip() for a in re.split(r",\s(?![^<]*>)", args)]
    if name in ("open", "openat", "openat2", "creat"):
        if name == "openat":
            path = resolve(parts[0], strings(args)[0])
            flags = parts[2] if len(parts) > 2 else ""
        elif name == "creat":
            path = resolve(None, strings(args)[0])
            flags = "O_WRONLY|O_CREAT|O_TRUNC"
        else:
            path = resolve(None, strings(args)[0])
            flags = parts[1] if len(parts) > 1 else ""
        if not inside(path):
            continue
        flagset = [f.replace("O_", "").lower() for f in flags.split("|") if f.startswith("O_")]
        if ("directory" in flagset or path == root) and not failed:
            continue  # a listing, or vim keeping its working directory open for fchdir
        shown = [f for f in flagset if f not in ("cloexec", "largefile", "noctty", "nofollow", "nonblock")]
        if shown == ["rdonly"] and not failed:
            emit(f"open {rel(path)} (rdonly)")
            continue
        emit(f"open {rel(path)} ({','.join(shown)}){ok}")
    elif name in ("write", "pwrite64", "writev", "pwritev", "pwritev2"):
        path = fdpath(parts[0])
        if path and inside(path) and not failed:
            emit(f"write {rel(path)}", (path, int(result)))
    elif name in ("copy_file_range", "sendfile", "sendfile64", "splice"):
        path = fdpath(parts[0] if name.startswith("sendfile") else parts[2])
        if path and inside(path) and not failed and int(result) > 0:
            emit(f"write {rel(path)}", (path, int(result)))
    elif name in ("ioctl",) and "FICLONE" in args:
        path = fdpath(parts[0])
        if path and inside(path):
            emit(f"clone into {rel(path)}{ok}")
    elif name in ("ftruncate", "truncate"):
        path = fdpath(parts[0]) if name == "ftruncate" else resolve(None, strings(args)[0])
        if path and inside(path):
            emit(f"truncate {rel(path)} to {parts[1]}{ok}")
    elif name in ("fsync", "fdatasync"):
        path = fdpath(parts[0])
        if path and inside(path):
            emit(f"{name} {rel(path)}{ok}")
    elif name == "close":
        path = fdpath(parts[0])
        if path and inside(path) and not path == root:
            if out and out[-1][0] == f"open {rel(path)} (rdonly)":
                out[-1] = (f"open+close {rel(path)} (rdonly)", 0)  # a look at it, nothing more
                continue
            emit(f"close {rel(path)}")
    elif name in ("rename", "renameat", "renameat2"):
        s = strings(args)
        if name == "rename":
            a, b = resolve(None, s[0]), resolve(None, s[1])
        else:
            a, b = resolve(parts[0], s[0]), resolve(parts[2], s[1])
        if inside(a) or inside(b):
            extra = " (" + parts[4].lower().replace("rename_", "") + ")" if name == "renameat2" and len(parts) > 4 and parts[4] != "0" else ""
            emit(f"rename {rel(a) if inside(a) else a} -> {rel(b) if inside(b) else b}{extra}{ok}")
    elif name in ("unlink", "unlinkat", "rmdir"):
        s = strings(args)
        path = resolve(parts[0], s[0]) if name == "unlinkat" else resolve(None, s[0])
        if inside(path):
            verb = "rmdir" if name == "rmdir" or "AT_REMOVEDIR" in args else "unlink"
            emit(f"{verb} {rel(path)}{ok}")
    elif name in ("mkdir", "mkdirat"):
        s = strings(args)
        path = resolve(parts[0], s[0]) if name == "mkdirat" else resolve(None, s[0])
        if inside(path):
            emit(f"mkdir {rel(path)}{ok}")
    elif name in ("link", "linkat", "symlink", "symlinkat"):
        s = strings(args)
        if name == "linkat":
            a, b = resolve(parts[0], s[0]), resolve(parts[2], s[1])
        elif name == "symlinkat":
            a, b = s[0], resolve(parts[1], s[1])
        else:
            a, b = (s[0] if name == "symlink" else resolve(None, s[0])), resolve(None, s[1])
        if inside(b):
            emit(f"{'hardlink' if name.startswith('link') else 'symlink'} {rel(b)} -> {rel(a) if inside(a) else a}{ok}")
    elif name in ("chmod", "fchmod", "fchmodat", "chown", "fchown", "fchownat", "lchown"):
        if name.startswith("f") and not name.endswith("at"):
            path = fdpath(parts[0])
            value = parts[1:]
        else:
            s = strings(args)
            path = resolve(parts[0], s[0]) if name.endswith("at") else resolve(None, s[0])
            value = parts[2:] if name.endswith("at") else parts[1:]
        if path and inside(path):
            verb = "chmod" if "chmod" in name else "chown"
            emit(f"{verb} {rel(path)} {' '.join(v for v in value if not v.startswith('AT_'))}{ok}")
    elif name in ("utimensat", "futimesat", "utimes", "utime"):
        path = fdpath(parts[0]) if name == "utimensat" and strings(args) == [] else None
        if path is None and strings(args):
            path = resolve(parts[0] if name in ("utimensat", "futimesat") else "AT_FDCWD", strings(args)[0])
        if path and inside(path):
            emit(f"set times {rel(path)}{ok}")
    elif name in ("setxattr", "lsetxattr", "fsetxattr"):
        path = fdpath(parts[0]) if name == "fsetxattr" else resolve(None, strings(args)[0])
        if path and inside(path):
            attr = strings(args)[1] if name != "fsetxattr" else strings(args)[0]
            emit(f"setxattr {rel(path)} {attr}{ok}")
    elif name in ("chdir", "fchdir") and not failed:
        target = resolve(None, strings(args)[0]) if name == "chdir" else fdpath(parts[0])
        cwd = target or cwd

for line, size in out:
    print(f"{line} {size} bytes" if line.startswith("write ") else line)
