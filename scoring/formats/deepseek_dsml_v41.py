"""DeepSeek V4.1 DSML: ``<｜DSML｜ calls>`` holding ``<｜DSML｜ invoke name="NAME">`` with
``<｜DSML｜ parameter name="P" string="true|false">value</｜DSML｜ parameter>`` (a space after the
marker, ``calls`` for V3.2's ``function_calls``), and ``<｜DSML｜invoke name="NAME"/>`` for a call
without arguments. Read by V3.2's DSML reader, which takes either spelling; a format of its own
so that a V4.1 template is told as V4.1 and a forced call opens in V4.1's markup.

Written from the issue's description of recorded V4.1 outputs (no V4.1 template or output was at
hand): the closing tags are taken to carry the same space (``</｜DSML｜ invoke>``); the reader takes
them with or without it.
"""

from __future__ import annotations

from scoring.formats.deepseek_dsml import read, render_dsml
from scoring.formats.spec import CallMarkup, Format, Marker, family_prompting
from scoring.model import Call

CALLS = "<｜DSML｜ calls>"
INVOKE = "<｜DSML｜ invoke"


def render(calls: list[Call]) -> str:
    return render_dsml(calls, " ", "calls")


FORMAT = Format(
    name="deepseek_dsml_v41",
    render=render,
    writes=(
        '`<｜DSML｜ calls><｜DSML｜ invoke name="NAME"><｜DSML｜ parameter name="P" string="true\\|false">'
        'value</｜DSML｜ parameter></｜DSML｜ invoke>` (`<｜DSML｜invoke name="NAME"/>` without arguments)'
    ),
    families="DeepSeek V4.1 (DSML)",
    auto_when="`｜DSML｜ calls` or `｜DSML｜ invoke`",
    decode_needs_tools=True,
    markers=(Marker(CALLS, read), Marker(INVOKE, read)),
    fingerprints=(("｜DSML｜ calls",), ("｜DSML｜ invoke",)),
    fingerprint_rank=5,  # before deepseek_dsml, whose fingerprint a V4.1 template also holds
    prompting=family_prompting(
        render,
        (CALLS + "\n" + INVOKE + ' name="', '{name}">\n'),
        markup=CallMarkup(
            INVOKE + ' name="{name}">\n',
            "</｜DSML｜ invoke>",
            arguments="deepseek_v4_1_xml",
            opening=CALLS + "\n",
            separator="\n",
            closing="\n</｜DSML｜ calls>",
        ),
    ),
)
