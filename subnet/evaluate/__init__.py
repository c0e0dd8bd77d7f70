"""Evaluate any OpenAI-compatible endpoint on a fresh, rotating tool-calling task set.

    python -m subnet.evaluate --endpoint http://127.0.0.1:8000/v1 [--tasks.count 200] [--seed S]

Miners run it against their own model (a vLLM or SGLang server, llama.cpp, their miner's
`/v1/chat/completions`) before they register; the answer is the table a validator would
build: BFCL accuracy per category, overall, the error types, latency. It runs on the validator's
own parts: tasks from its task source (`LibraryTasks`: `tasks.generate`, and a fresh surface
with `tasks.variant`), every answer (structured `tool_calls` or text content) judged by its
judge (`BfclJudge`: `scoring.check`), and with `--wallet.name` every request signed and sent by
its client (`MinerClient`, `bt.http_auth`), which a running miner requires. Unsigned, the same
client speaks to an engine's URL (`EngineTarget`; optionally `Authorization: Bearer` with the key
in the environment variable `--model.api_key_env` names). Nothing the
endpoint returns is executed. The seed defaults to a random one and is printed, so any run can
be repeated exactly.

Files: `settings` (what a run needs, URLs), `cli` (flags, `main`), `endpoint` (the client a run
talks through), `run` (playing the tasks against one endpoint), `report` (summaries, table,
Markdown, JSON), `episodes` (`--episodes`).
"""

from subnet.evaluate.cli import build_parser, main, parse_settings
from subnet.evaluate.endpoint import Endpoint, load_signer, open_endpoint
from subnet.evaluate.report import (
    RENDERERS,
    CategorySummary,
    EvaluationReport,
    StderrProgress,
    percentile,
    rerun_command,
    summarise,
)
from subnet.evaluate.run import (
    TaskResult,
    build_tasks,
    run_evaluation,
    score_result,
    task_source,
)
from subnet.evaluate.settings import (
    PROG,
    EvaluateError,
    EvaluateSettings,
    chat_completions_url,
    health_url,
    models_url,
)

__all__ = [
    "PROG",
    "RENDERERS",
    "CategorySummary",
    "Endpoint",
    "EvaluateError",
    "EvaluateSettings",
    "EvaluationReport",
    "StderrProgress",
    "TaskResult",
    "build_parser",
    "build_tasks",
    "chat_completions_url",
    "health_url",
    "load_signer",
    "main",
    "models_url",
    "open_endpoint",
    "parse_settings",
    "percentile",
    "rerun_command",
    "run_evaluation",
    "score_result",
    "summarise",
    "task_source",
]
