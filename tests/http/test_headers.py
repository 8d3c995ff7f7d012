"""Header values built from request data: a file name is one file name, whatever it holds."""

import re
from urllib.parse import quote, unquote

import pytest

from app.http.headers import content_disposition
from tests.helpers import API, create_competition
from tests.kaggle.test_api import call

EVIL = "a\"; filename*=utf-8''evil.exe"


_PARAM = re.compile(r';\s*([^=;\s]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')


def parameters(header: str) -> list[tuple[str, str]]:
    """The header's parameters as a browser splits them (quoted strings kept whole)."""
    return [(name.lower(), value) for name, value in _PARAM.findall(header)]


def saved_as(header: str) -> str:
    """The name a browser saves the download under: RFC 6266 gives ``filename*`` precedence."""
    found = dict(parameters(header))
    if "filename*" in found:
        charset, _, encoded = found["filename*"].split("'", 2)
        return unquote(encoded, encoding=charset)
    return found["filename"].strip('"')


@pytest.mark.parametrize(
    "name",
    [EVIL, "plain.csv", "résumé données.csv", "back\\slash.csv", "new\r\nline.csv", "日本.zip"],
)
def test_a_file_name_comes_back_exactly_and_smuggles_no_parameter(name):
    header = content_disposition(name)
    assert saved_as(header) == name
    assert "\r" not in header and "\n" not in header
    fallback = header.split('filename="', 1)[1].split('"', 1)[0]
    assert fallback.isascii() and "\\" not in fallback
    assert [name for name, _ in parameters(header)] == ["filename", "filename*"]


def test_the_kaggle_bundle_download_does_not_take_a_parameter_from_its_url(client, host, alice):
    create_competition(client, host.headers)
    client.put(
        f"{API}/competitions/churn/files/train.csv", content=b"id\n1\n", headers=host.headers
    )
    link = call(client, "DownloadDataFiles", {"competitionName": "churn"}, alice.headers)
    assert link.status_code == 302, link.text
    base = link.headers["location"].rsplit("/", 1)[0]
    response = client.get(f"{base}/{quote(EVIL, safe='')}")
    assert response.status_code == 200
    assert saved_as(response.headers["content-disposition"]) == EVIL
