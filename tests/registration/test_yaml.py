"""The competition's YAML file takes who takes part: ``registration``, ``rules``, ``allow`` and
``deny``, validated with their line, as the rest of the file."""

import pytest
from pydantic import ValidationError

from app.client.bodyfile import parse
from app.client.host import template
from app.competitions.schemas import CompetitionCreate

YAML = """
slug: club
title: Club
metric: {name: roc_auc}
registration: approval
rules: |
  # Rules
  One account per person.
allow: ["@Uni.Example.EDU"]
deny:
  - spam@example.org
"""


def test_a_yaml_body_carries_registration_rules_and_lists():
    body = CompetitionCreate.model_validate(parse(YAML, is_json=False).data)
    assert body.registration == "approval"
    assert body.rules.startswith("# Rules")
    assert body.allow == ["@uni.example.edu"] and body.deny == ["spam@example.org"]


def test_a_wrong_mode_or_entry_names_its_field_and_line():
    parsed = parse(YAML.replace("approval", "closed").replace("spam@", "spam at "), is_json=False)
    with pytest.raises(ValidationError) as raised:
        CompetitionCreate.model_validate(parsed.data)
    fields = {error["loc"][0] for error in raised.value.errors()}
    assert fields == {"registration", "deny"}
    assert parsed.line_of(("registration",)) == 5 and parsed.line_of(("deny", 0)) == 11


def test_the_template_says_who_takes_part():
    text = template("roc_auc")
    assert "registration: open" in text and "# rules: |" in text
    assert CompetitionCreate.model_validate(parse(text, is_json=False).data).registration == "open"
