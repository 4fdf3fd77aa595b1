"""States asked for in varied words, measured: SFT on relabelled copies whose intents word each state
another way, against the committed SFT.

    python -m benchmarks.state_paraphrase --out /tmp/state-paraphrase     # datasets, SFT, its evaluation (~1 h)
    python -m benchmarks.state_paraphrase --out /tmp/state-paraphrase --data-only

Most states the committed SFT misses on held-out intents are asked for in words the training intent
of that story never used (`python -m benchmarks.state_wording`: "greyed out", "mandatory", "already
chosen"). Each training story is written once in its own words and copied six times with other labels
(``generate.relabelled_variants``), so every copy repeats its story's one wording of a state. This
benchmark rewrites the copies, not the stories as written: where a copy's intent words a state with one
phrase of a group in ``STATE_PHRASES``, it says it with another of the group, picked by the copy's id
(the same bytes every run), in the request and in the answer's story ``intent:`` line alike; the
story, its arguments and its test do not change. It then trains SFT on the rewritten trajectories with
the stage's own command and params, evaluates the adapter with ``tasks.evaluate_sft`` and pairs the
result with the committed SFT evaluation (one seed: a seed alone moves held-out reward by up to ~0.04,
docs/profiles.md). It is not in the pipeline, because it did not help (docs/profiles.md, "Levers measured
and left out": −0.009 [−0.055, +0.043] held out).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.intent_last import rewrite_trajectories, sft_and_paired, sft_benchmark_parser
from benchmarks.paths import EVAL_TRAJECTORIES, TRAJECTORIES
from benchmarks.state_wording import whole_phrases
from worldagent.errors import InputError, clean_errors
from worldagent.world_agent.relabel import is_relabelled

# Phrases that say the same state and stand in the same place in a sentence (before a noun or after
# "is"), so one replaces another; "cannot be clicked" and the like are left as written.
STATE_PHRASES: dict[str, tuple[str, ...]] = {
    "disabled": ("disabled", "greyed-out", "greyed out", "unavailable", "inactive"),
    "checked": ("checked", "ticked"),
    "required": ("required", "mandatory", "compulsory"),
    "selected": ("selected", "chosen", "picked", "preselected"),
}
# The phrase written in place of "greyed out": one form per group member, hyphens kept where used.
_WRITE_AS = {"greyed out": "greyed-out"}
_ARTICLE = re.compile(r"\b([Aa])(n?)(\s+)$")


def _pick(options: Sequence[str], key: str) -> str:
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return options[int.from_bytes(digest, "big") % len(options)]


def _with_article(before: str, word: str) -> str:
    """``before`` (the text up to the replaced phrase) with a trailing "a"/"an" agreeing with ``word``."""
    match = _ARTICLE.search(before)
    if not match:
        return before
    article = match.group(1) + ("n" if word[:1].lower() in "aeiou" else "")
    return before[: match.start()] + article + match.group(3)


def reword_states(intent: str, key: str) -> str:
    """``intent`` with each state phrase of ``STATE_PHRASES`` it uses replaced by another phrase of
    its group, the first occurrence of each group only, chosen by ``key``; unchanged when it uses none."""
    for state, phrases in STATE_PHRASES.items():
        match = whole_phrases(phrases).search(intent)
        if not match:
            continue
        start, end = match.span()
        written_as = _WRITE_AS.get(match.group(0).lower(), match.group(0).lower())
        others = [p for p in dict.fromkeys(_WRITE_AS.get(p, p) for p in phrases) if p != written_as]
        new = _pick(others, f"{key}:{state}")
        written = intent[start:end]
        if written[:1].isupper():
            new = new[:1].upper() + new[1:]
        intent = _with_article(intent[:start], new) + new + intent[end:]
    return intent


def _ts_string(text: str) -> str:
    """``text`` as it stands inside a single-quoted TypeScript string of a story."""
    return text.replace("\\", "\\\\").replace("'", "\\'")


def reword_row(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """A relabelled copy with its intent's states reworded in its request and its story's ``intent:``
    line; None when the row is not a copy, uses no state phrase, or does not write its intent in both."""
    intent = str(row.get("intent") or "")
    if not is_relabelled(row) or not intent:
        return None
    new = reword_states(intent, str(row["id"]))
    if new == intent:
        return None
    roles = {"user": (intent, new), "assistant": (_ts_string(intent), _ts_string(new))}
    messages = []
    for message in row["messages"]:
        old_text, new_text = roles.get(str(message.get("role")), ("", ""))
        content = str(message["content"])
        if old_text:
            if old_text not in content:
                return None
            content = content.replace(old_text, new_text)
        messages.append({**message, "content": content})
    return {**row, "intent": new, "messages": messages}


def write_reworded(source: Path, target: Path) -> Counter[str]:
    """Rewrite a trajectories file: the copies ``reword_row`` changes, every other row as it was."""
    counts = rewrite_trajectories(source, target, reword_row)
    return Counter(reworded=counts["changed"], kept=counts["kept"])


@clean_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = sft_benchmark_parser(__doc__.splitlines()[0], "write the reworded trajectories and stop")
    args = parser.parse_args(argv)
    if not TRAJECTORIES.is_file():
        raise InputError(f"{TRAJECTORIES}: not found; run `make pipeline` (or `dvc repro generate`) first")
    trajectories = args.out / "data" / TRAJECTORIES.name
    counts = write_reworded(TRAJECTORIES, trajectories)
    print(f"{TRAJECTORIES}: {counts['reworded']} relabelled copies reworded, {counts['kept']} rows kept", flush=True)
    if not args.data_only:
        sft_and_paired(args.params, args.out, trajectories, EVAL_TRAJECTORIES, "state_paraphrase")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
