"""One sandbox worker process: plays episodes' environments for the validator (subnet.validator.sandbox).

Run as ``python -m subnet.validator.sandbox_worker MEMORY_BYTES CPU_S [MODULE...]`` (MODULEs are
imported at start: test equipment that registers environments of its own). It caps its own address
space (``RLIMIT_AS``), then reads requests from stdin and writes replies to stdout, each frame a
4-byte big-endian length and its payload, until stdin ends. Before every request it moves its
soft CPU-time limit (``RLIMIT_CPU``) to what it has used plus ``CPU_S``: a tool that burns more is
ended by the kernel (SIGXCPU) even if nobody is watching; the validator's wall deadline, which
kills the whole worker, normally comes first.

A request is JSON: ``{"drop": [ids], "id": id, "spec": {...}, "replay": [ops], "ops": [ops]}``.
``drop`` forgets finished episodes (their environments' memory); ``spec`` (environment, env_seed,
size, config) builds the episode's environment afresh and ``replay`` replays the operations it had
seen on a worker that was ended (environments are deterministic, so the state is the same);
``ops`` are then run in order and the last one's result is the reply. An operation is
``["turn"]`` (``begin_turn``), ``["call", name, arguments]`` (``tasks.episodes.runner.run_call``)
or ``["state"]`` (the fingerprint). The reply is ``J`` + JSON, or ``S`` + the fingerprint as
UTF-8 (sent raw: a long-context state is large, and JSON-quoting it would cost both sides).
Anything a tool raises, memory exhaustion included, is replied as ``{"raised": "..."}`` and the
episode's environment is forgotten (its state may be half-changed): that episode has failed.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import sys
from typing import Any, BinaryIO

# Every environment's code is loaded at start, before the memory limit and the first request
# (``main`` builds each class once): a request then only pays for its own work.
from tasks.episodes.designs import designed_class
from tasks.episodes.environments import ENVIRONMENTS, environment_class
from tasks.episodes.runner import run_call

__all__ = ["main"]


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _environment(spec: dict[str, Any]) -> Any:
    cls: Any = environment_class(str(spec["environment"]))
    if spec.get("design") is not None:  # offered through a tool design (tasks.episodes.designs)
        cls = designed_class(str(spec["environment"]), str(spec["design"]))
    if spec.get("config") is not None:
        return cls.from_config(spec["config"])
    return cls(bytes.fromhex(str(spec["env_seed"])), int(spec["size"]))


def _apply(environment: Any, op: list[Any]) -> Any:
    kind = op[0]
    if kind == "turn":
        environment.begin_turn()
        return None
    if kind == "state":
        return str(environment.fingerprint())
    if kind == "call":
        return list(run_call(environment, str(op[1]), dict(op[2])))
    raise ValueError(f"unknown operation {str(kind)[:40]!r}")


def _serve(request: dict[str, Any], environments: dict[str, Any]) -> tuple[bytes, bytes]:
    for key in request.get("drop") or ():
        environments.pop(key, None)
    key = request.get("id")
    if key is None:
        return b"J", b"null"
    try:
        if request.get("spec") is not None:
            environments.pop(key, None)
            environment = _environment(request["spec"])
            for op in request.get("replay") or ():
                _apply(environment, op)
            environments[key] = environment
        environment = environments.get(key)
        if environment is None:
            return b"J", json.dumps({"raised": "the episode's environment is not held here"}).encode()
        result: Any = None
        for op in request["ops"]:
            result = _apply(environment, op)
        if isinstance(result, str):
            return b"S", result.encode("utf-8", "surrogatepass")
        return b"J", json.dumps({"ok": result}).encode()
    except BaseException as error:  # anything a tool raises is this episode's failure
        environments.pop(key, None)
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
        return b"J", json.dumps({"raised": f"{type(error).__name__}: {str(error)[:200]}"}).encode()


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    memory, cpu_s = int(args[0]), float(args[1])
    # Frames travel on the original stdin/stdout; anything else printed goes to stderr instead.
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # Every environment's code (the registry names modules) is loaded once, before the memory
    # limit and the first request.
    for module in args[2:]:
        importlib.import_module(module)
    for name in ENVIRONMENTS:
        environment_class(name)

    if memory > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (memory, hard))
    _, cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
    environments: dict[str, Any] = {}
    replies.write(b"\x00\x00\x00\x01R")  # ready
    replies.flush()
    while True:
        header = _read_exactly(requests, 4)
        if header is None:
            return
        body = _read_exactly(requests, int.from_bytes(header, "big"))
        if body is None:
            return
        # The soft limit is whole seconds; the kernel sends SIGXCPU when it is passed (default
        # action: end the process). The hard limit is never lowered, so it can move up again.
        soft = int(_cpu_used() + cpu_s) + 1
        if cpu_hard == resource.RLIM_INFINITY or soft < cpu_hard:
            resource.setrlimit(resource.RLIMIT_CPU, (soft, cpu_hard))
        try:
            kind, payload = _serve(json.loads(body), environments)
        except MemoryError:
            environments.clear()
            kind, payload = b"J", b'{"raised": "MemoryError"}'
        replies.write((len(payload) + 1).to_bytes(4, "big") + kind + payload)
        replies.flush()


if __name__ == "__main__":
    main()
