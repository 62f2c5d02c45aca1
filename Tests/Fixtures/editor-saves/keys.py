#!/usr/bin/env python3
"""Runs a terminal program on a pseudo-terminal and types into it, as a person would.

    keys.py 'KEYS' PROGRAM ARGS...

KEYS is typed after the program had 1 s to start, in pieces separated by `|` with 0.5 s between them (an empty
piece only waits); `\\e` is Escape, `\\r` Enter, `^X` Control-X. Exits with the program's status (124 if it did
not end within 20 s).
"""
import os
import pty
import select
import sys
import time

keys, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "xterm"
    os.execvp(argv[0], argv)


def drain(seconds):
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], max(0, end - time.time()))
        if ready:
            try:
                if not os.read(fd, 65536):
                    return False
            except OSError:
                return False
    return True


def decode(piece):
    piece = piece.replace("\\e", "\x1b").replace("\\r", "\r")
    out = ""
    i = 0
    while i < len(piece):
        if piece[i] == "^" and i + 1 < len(piece):
            out += chr(ord(piece[i + 1].upper()) - 64)
            i += 2
        else:
            out += piece[i]
            i += 1
    return out


drain(1.0)
for piece in keys.split("|"):
    os.write(fd, decode(piece).encode())
    if not drain(0.5):
        break
deadline = time.time() + 20
while time.time() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        sys.exit(os.waitstatus_to_exitcode(status))
    drain(0.2)
os.kill(pid, 9)
sys.exit(124)
