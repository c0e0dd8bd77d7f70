"""Logging set-up for the neurons' ``main()``: level from ``--logging.*``, stderr plus an optional file."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from subnet.config import ConfigError, LoggingSettings

FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def configure_logging(settings: LoggingSettings, *, process_name: str) -> Path | None:
    """Configure the root logger once for this process; returns the log file, if any.

    INFO by default, DEBUG with ``--logging.debug``; ``--logging.trace`` adds the SDK's
    RPC traffic (``bittensor.*`` at DEBUG), which is otherwise kept at WARNING.
    """
    level = logging.DEBUG if settings.debug or settings.trace else logging.INFO
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    log_file: Path | None = None
    if settings.logging_dir is not None:
        try:
            settings.logging_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ConfigError(
                f"cannot create --logging.logging_dir {settings.logging_dir}: {error}"
            ) from None
        log_file = settings.logging_dir / f"{process_name}.log"
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    logging.basicConfig(level=level, format=FORMAT, handlers=handlers, force=True)
    logging.getLogger("bittensor").setLevel(logging.DEBUG if settings.trace else logging.WARNING)
    for noisy in ("websockets", "asyncio", "aiosqlite"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if settings.trace else logging.WARNING)
    return log_file
