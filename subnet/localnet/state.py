"""The localnet's state directory: what lives where, reuse by default, ``--reset`` to start over.

    <state>/localnet.json     marks the folder as ours (and records the chain's settings)
    <state>/wallets/          development wallets (unencrypted: never put real funds on them)
    <state>/devchain.sqlite   the development chain every process shares
    <state>/validator.sqlite  the validator's database (unless --db.url says otherwise)
    <state>/validator.secret  the validator's round-seed secret
    <state>/bootstrap.json    what the bootstrap found or did
    <state>/logs/*.log        one log per process, appended run after run

A folder that holds other files and no ``localnet.json`` is never written to or deleted.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MARKER = "localnet.json"


class StateError(Exception):
    """The state directory cannot be used as asked; one line says why."""


@dataclass(frozen=True)
class StateDir:
    root: Path

    @property
    def marker(self) -> Path:
        return self.root / MARKER

    @property
    def wallets(self) -> Path:
        return self.root / "wallets"

    @property
    def devchain(self) -> Path:
        return self.root / "devchain.sqlite"

    @property
    def database(self) -> Path:
        return self.root / "validator.sqlite"

    @property
    def secret(self) -> Path:
        return self.root / "validator.secret"

    @property
    def bootstrap_report(self) -> Path:
        return self.root / "bootstrap.json"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def log(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    @property
    def database_url(self) -> str:
        return f"sqlite+aiosqlite:///{self.database}"

    def is_ours(self) -> bool:
        return self.marker.is_file()

    def _foreign(self) -> bool:
        """True when the folder exists, holds something, and is not a localnet state directory."""
        return self.root.is_dir() and any(self.root.iterdir()) and not self.is_ours()

    def reset(self) -> bool:
        """Delete everything in the state directory; True when there was something to delete."""
        if self.root.exists() and not self.root.is_dir():
            raise StateError(f"--state.dir {self.root} is a file, not a folder")
        if self._foreign():
            raise StateError(
                f"--state.dir {self.root} holds files but no {MARKER}: not a localnet state directory, "
                "so --reset will not delete it; pick another --state.dir"
            )
        if not self.root.exists():
            return False
        try:
            shutil.rmtree(self.root)
        except OSError as exc:
            raise StateError(f"cannot delete {self.root}: {exc.strerror or exc}") from None
        return True

    def prepare(self, chain: dict[str, Any]) -> dict[str, Any]:
        """Create the folders (and the marker on first use); returns the recorded chain settings.

        On reuse the recorded settings win for what cannot change without a reset (the block
        time is fixed when the devchain file is created).
        """
        if self.root.exists() and not self.root.is_dir():
            raise StateError(f"--state.dir {self.root} is a file, not a folder")
        if self._foreign():
            raise StateError(
                f"--state.dir {self.root} holds files but no {MARKER}: not a localnet state directory; "
                "pick an empty or new folder"
            )
        try:
            self.logs.mkdir(parents=True, exist_ok=True)
            recorded = self.recorded()
            if recorded is None or not self.devchain.exists():
                recorded = {"created": datetime.now(UTC).isoformat(timespec="seconds"), **chain}
                self.marker.write_text(json.dumps(recorded, indent=2) + "\n")
        except OSError as exc:
            raise StateError(f"cannot use --state.dir {self.root}: {exc.strerror or exc}") from None
        return recorded

    def recorded(self) -> dict[str, Any] | None:
        try:
            data = json.loads(self.marker.read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def update_record(self, **values: Any) -> None:
        data = self.recorded() or {}
        data.update(values)
        self.marker.write_text(json.dumps(data, indent=2) + "\n")
