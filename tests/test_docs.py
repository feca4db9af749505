"""The documentation keeps up with the model: every named configuration and
every property is explained somewhere in docs/, every action and state
variable is mapped in docs/protocol.md, and every predicate the docs point
a reviewer to exists where they say it is.

The names come from the code, so adding a configuration, a property, an
action or a variable without documenting it fails here.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from protocol import properties as props
from protocol.configurations.named import named_configurations
from protocol.model.next import ACTIONS
from protocol.model.state import State

DOCS = Path(__file__).resolve().parent.parent / "docs"
PROTOCOL_DOC = DOCS / "protocol.md"
PROPERTIES_DOC = DOCS / "properties.md"

# Spec section 8's HoldsUnfair and section 5's five properties are listed
# explicitly too, so that dropping one from the code cannot drop it from the docs.
SPEC_PROPERTIES = ("TypeOK", "I1", "PhysicalLeSince", "NoRegression", "CompactionNotStalled")
CONFIGURATION_NAMES = sorted(set(named_configurations()) | {"HoldsUnfair"})
PROPERTY_NAMES = sorted(
    set(SPEC_PROPERTIES) | set(props.declared_names())
)


def all_docs() -> str:
    return "\n".join(path.read_text() for path in sorted(DOCS.glob("*.md")))


def mentions(text: str, name: str) -> bool:
    """`name` appears as a whole word (so `I1` is not found inside `I10`)."""
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) is not None


@pytest.mark.parametrize("name", CONFIGURATION_NAMES)
def test_every_named_configuration_is_documented(name):
    assert mentions(all_docs(), name), f"no page in docs/ mentions the configuration {name}"


@pytest.mark.parametrize("name", PROPERTY_NAMES)
def test_every_property_is_documented(name):
    assert mentions(all_docs(), name), f"no page in docs/ mentions the property {name}"


@pytest.mark.parametrize("name", sorted(action.name for action in ACTIONS))
def test_every_action_is_mapped_in_the_protocol_page(name):
    assert mentions(PROTOCOL_DOC.read_text(), name), f"docs/protocol.md does not map the action {name}"


@pytest.mark.parametrize("name", State._fields)
def test_every_state_variable_is_mapped_in_the_protocol_page(name):
    assert mentions(PROTOCOL_DOC.read_text(), name), f"docs/protocol.md does not map the variable {name}"


def test_the_mention_check_needs_a_whole_word():
    # Guards the helper the tests above rely on: a prefix or a longer name is not a mention.
    assert mentions("violates `I1` first", "I1")
    assert not mentions("invariant I10", "I1")
    assert not mentions("HoldsRoutedX", "HoldsRouted")


# "`i1` in `protocol/properties/i1.py`": a predicate and the module that defines it.
PREDICATE_REFERENCE = re.compile(r"`(\w+)` in `(protocol/(?:properties/)?\w+)\.py`")


def predicate_references() -> list[tuple[str, str]]:
    text = PROTOCOL_DOC.read_text() + PROPERTIES_DOC.read_text()
    return sorted(set(PREDICATE_REFERENCE.findall(text)))


def test_the_properties_page_names_the_predicates():
    named = {function for function, _ in predicate_references()}
    assert {"type_ok", "i1", "physical_le_since", "no_regression"} <= named


@pytest.mark.parametrize("function, module", predicate_references())
def test_every_predicate_the_docs_name_exists(function, module):
    imported = importlib.import_module(module.replace("/", "."))
    assert callable(getattr(imported, function, None)), f"docs name {function} in {module}.py, which has no such function"


PATH_REFERENCE = re.compile(r"`(protocol/[\w/]*\.py)`")


@pytest.mark.parametrize("doc", [PROTOCOL_DOC, PROPERTIES_DOC], ids=lambda path: path.name)
def test_every_source_file_the_docs_cite_exists(doc):
    root = DOCS.parent
    missing = [path for path in PATH_REFERENCE.findall(doc.read_text()) if not (root / path).is_file()]
    assert not missing, f"{doc.name} cites files that do not exist: {missing}"
