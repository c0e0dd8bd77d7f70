"""The miner's model hosting: backends (transformers, openai), output adapters, the demo model.

Public face:
- `ModelOptions`, `GenerationRequest`, `GenerationResult`, `Usage` and the errors in `base`;
- `build_backend(options)` (the `--model.backend` registry);
- `ADAPTERS` / `MODEL_FORMATS` / `format_for_template` (the `--model.format` registry: one
  module per format in scoring.formats);
- `MinerModel` in `service` adapts a backend to the wire protocol's handler;
- `node.run_miner(settings)` is the miner process.
Heavy modules (torch, transformers) are imported only when a backend is started.
"""

from subnet.miner.adapters import ADAPTERS, MODEL_FORMATS, OutputAdapter, format_for_template
from subnet.miner.backends import build_backend
from subnet.miner.base import (
    Backend,
    BadModelRequest,
    EngineTimeout,
    EngineUnavailable,
    GenerationRequest,
    GenerationResult,
    ModelError,
    ModelLoadError,
    ModelOptions,
    Usage,
)
from subnet.registry import BACKENDS

__all__ = [
    "ADAPTERS",
    "BACKENDS",
    "MODEL_FORMATS",
    "Backend",
    "BadModelRequest",
    "EngineTimeout",
    "EngineUnavailable",
    "GenerationRequest",
    "GenerationResult",
    "ModelError",
    "ModelLoadError",
    "ModelOptions",
    "OutputAdapter",
    "Usage",
    "build_backend",
    "format_for_template",
]
