"""Red team: the lexical miner, a model-free keyword program that reads any text, template or phrased.

It knows only the public code: the tool library (descriptions, parameter descriptions, request
templates, value generators) and the value formats of ``tasks.values``. For each request it

1. maps every offered (renamed, reworded) tool back to the library tool it was most likely made
   from, by word overlap weighted with IDF over names, descriptions and parameter descriptions;
   each offered parameter gets the value generator of its closest library parameter (same JSON
   type, nearest description); a tool that fits no library tool keeps its own text and its
   parameters are read by JSON type, enum and the nearest library parameter over the whole library;
2. cuts the request into clauses (the generator's joiners, sentence ends, conjunctions) and groups
   them: a clause that names a tool opens a call once the previous call has its values;
3. picks per group the offered tool whose words (and its library tool's templates) best overlap
   the group's words, unless a library tool that is not offered fits clearly better (no call);
4. pulls typed values out of the group with every public pool and format (pick lists, composed
   ids and paths, number say-forms, the date forms, times, coordinates, cron phrases, quoted text)
   and assigns them to parameters greedily by type strength and the description and template words
   next to each value;
5. answers no call when a required parameter got no value (and a vague phrase stands in for it).

    .venv/bin/python bench/redteam.py --miners lexical [--tasks 600]

Modules, in the order they build on each other: ``words``, ``tools``, ``finders``, ``reading``,
``worked``, ``miner``.
"""

from __future__ import annotations

from .miner import LexicalMiner

__all__ = ["LexicalMiner"]
