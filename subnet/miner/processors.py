"""The ``generate``-style logits processors and stopping criteria of the transformers backend
(besides the guide, subnet.miner.guided): per-row budgets, a required call's first tokens, and
the wrapper that runs such processors on one row of the continuous engine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


class ProcessorsOnOneRow:
    """The engine's per-row TokenConstraint made of ``generate``-style logits processors, each built for a
    batch of this one row with a prompt width of 0 (it is shown the row's written tokens only)."""

    def __init__(self, processors: list[Any]) -> None:
        self.processors = processors

    def prepare(self, generated: Any) -> None:
        """The processors' CPU work for the coming step (the guide's bitmask), done while the
        device computes it; see `subnet.miner.continuous_batching.TokenConstraint`."""
        import torch

        written = torch.tensor([list(generated)], dtype=torch.long)
        for processor in self.processors:
            prepare = getattr(processor, "prepare", None)
            if prepare is not None:
                prepare(written)

    def constrain(self, generated: Any, scores: torch.Tensor) -> torch.Tensor:
        import torch

        written = torch.tensor([list(generated)], dtype=torch.long)
        batch = scores.unsqueeze(0)
        for processor in self.processors:
            batch = processor(written, batch)
            failures = getattr(processor, "failures", None)  # GuidedCalls keeps a row's failure
            if failures:
                raise next(iter(failures.values()))  # the engine ends this row alone with it
        return batch[0]


class RowBudgets:
    """Stops each row of a batch at its own token budget (rows stop independently in generate)."""

    def __init__(self, prompt_width: int, budgets: list[int]) -> None:
        self.prompt_width = prompt_width
        self.budgets = budgets
        self._limits: torch.Tensor | None = None

    def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.Tensor:
        import torch

        if self._limits is None:
            self._limits = torch.tensor(self.budgets, device=input_ids.device)
        return (input_ids.shape[1] - self.prompt_width) >= self._limits


class RequiredChoice:
    """Makes each row with choices begin its answer with one of them, token by token: a call
    is required, and the model picks which function (the likeliest allowed token at each step)."""

    def __init__(self, prompt_width: int, choices: list[list[list[int]]]) -> None:
        self.prompt_width = prompt_width
        self.choices = choices

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        step = input_ids.shape[1] - self.prompt_width
        for row, options in enumerate(self.choices):
            if not options:
                continue
            written = input_ids[row, self.prompt_width :].tolist() if step else []
            if written in options:  # one choice is written out: the rest is the model's
                continue
            allowed = {option[step] for option in options if len(option) > step and option[:step] == written}
            if allowed:
                keep = list(allowed)
                kept_scores = scores[row, keep].clone()
                scores[row, :] = float("-inf")
                scores[row, keep] = kept_scores
        return scores
