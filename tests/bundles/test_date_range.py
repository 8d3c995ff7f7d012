"""A bundle's date out of range is refused naming its field, never an overflow's 500 (issue 42:
`9999-12-31T23:59:59-12:00` overflowed converting to UTC)."""

import pytest

from app.bundles import BundleError, read_bundle
from tests.bundles.builders import CODABENCH_CONFIG, codabench_files, make_zip


@pytest.mark.parametrize("when", ["'9999-12-31T23:59:59-12:00'", "'1900-01-01'", "'3000-01-01'"])
def test_an_out_of_range_phase_date_is_refused_naming_the_field(when: str) -> None:
    config = CODABENCH_CONFIG.replace("start: 1-1-2026 # Month/Day/Year", f"start: {when}")
    with pytest.raises(BundleError) as caught:
        read_bundle(make_zip(codabench_files(config)))
    assert caught.value.field is not None and caught.value.field.endswith("start")
    assert "between 1970-01-01 and 2999-12-31" in str(caught.value)
