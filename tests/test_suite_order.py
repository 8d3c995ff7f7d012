"""The module lists that tier and order the suite (tests/conftest.py) name modules that exist: a
renamed module would silently leave the fast tier's exclusions or the long-first order."""

import pytest

from tests.conftest import BROWSER_MODULES, LONG_MODULES, SLOW_MODULES, TESTS


@pytest.mark.parametrize("module", sorted(SLOW_MODULES | BROWSER_MODULES | LONG_MODULES))
def test_every_listed_module_exists(module):
    assert (TESTS / module).is_file(), module


def test_a_module_is_slow_or_long_not_both():
    assert not SLOW_MODULES & LONG_MODULES
