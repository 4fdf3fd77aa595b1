"""The call grammar in GBNF (for llama.cpp and vLLM's guided decoding) accepts what the Python
automaton accepts: the reference answers, and nothing with an unknown tool or argument."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from worldagent.lm.constrained import CallAutomaton, ToolGrammar, call_grammar_gbnf
from worldagent.tools.registry import tool_schemas

TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]|[A-Za-z0-9_]+|::=|[()|*]|\s+')


def gbnf_regex(grammar: str) -> re.Pattern[str]:
    """A (non-recursive) GBNF grammar as one Python regex: each rule inlined where it is named."""
    rules = {}
    for line in grammar.splitlines():
        name, body = line.split(" ::= ", 1)
        rules[name] = body

    def expand(body: str) -> str:
        out = []
        for token in TOKEN.findall(body):
            if token.isspace():
                continue
            if token.startswith('"'):
                out.append(re.escape(json.loads(token)))
            elif token.startswith("["):
                out.append(token.replace("\\n", "\n"))
            elif token in "()|*":
                out.append("(?:" if token == "(" else token)
            else:
                out.append(f"(?:{expand(rules[token])})")
        return "".join(out)

    return re.compile(expand(rules["root"]), re.DOTALL)


@pytest.fixture(scope="module")
def grammar() -> re.Pattern[str]:
    return gbnf_regex(call_grammar_gbnf(tool_schemas()))


def automaton_accepts(text: str) -> bool:
    automaton = CallAutomaton(ToolGrammar.from_schemas(tool_schemas()), calls_only=True)
    state = automaton.run(automaton.start, text)
    return state != -1 and automaton.may_stop(state)


def test_the_reference_answers_are_in_both_grammars(grammar):
    path = Path("data/generated/world_agent/trajectories.eval.jsonl")
    answers = [json.loads(line)["messages"][2]["content"] for line in path.read_text().splitlines()[:20]]
    assert answers
    for answer in answers:
        assert automaton_accepts(answer)
        assert grammar.fullmatch(answer), answer[:200]


S, E, X = "<start_function_call>", "<end_function_call>", "<escape>"


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        (f"{S}call:runStory{{path:{X}a.tsx{X}}}{E}", True),
        (
            f"\n{S}call:writeStory{{content:{X}x <b>y</b>{X},path:{X}p{X}}}{E} {S}call:runStory{{path:{X}p{X}}}{E}\n",
            True,
        ),
        (f"{S}call:deleteAll{{path:{X}a{X}}}{E}", False),  # an unknown tool
        (f"{S}call:runStory{{file:{X}a{X}}}{E}", False),  # an unknown argument
        (f"{S}call:writeStory{{path:{X}a{X}}}{E}", False),  # a required argument missing
        (f"{S}call:runStory{{path:{X}a{X},path:{X}b{X}}}{E}", False),  # an argument twice
        (f"text {S}call:runStory{{path:{X}a{X}}}{E}", False),  # text outside the calls
        ("", False),  # no call at all
        (f"{S}call:runStory{{path:{X}a{X}", False),  # not closed
    ],
)
def test_the_gbnf_grammar_agrees_with_the_automaton(grammar, text, accepted):
    assert automaton_accepts(text) is accepted
    assert bool(grammar.fullmatch(text)) is accepted


def test_too_many_argument_orders_are_refused():
    schema = {"name": "t", "parameters": {"properties": {k: {"type": "string"} for k in "abcdef"}}}
    with pytest.raises(ValueError, match="argument orders"):
        call_grammar_gbnf([schema])
