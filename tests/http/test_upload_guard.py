"""Uploads: who and how big is checked before the body is read; faulty files are recorded, free of
quota, and every upload counts against a per-minute rate limit (issues 8 and 9)."""

from collections.abc import Iterator

import pytest

from app.main import create_app
from tests.asgi_client import TestClient
from tests.helpers import API, PERFECT, ready_competition, submit

BOUNDARY = "podiumtestboundary"


def _multipart(content: Iterator[bytes], name: str = "sub.csv") -> Iterator[bytes]:
    yield (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: text/csv\r\n\r\n"
    ).encode()
    yield from content
    yield f"\r\n--{BOUNDARY}--\r\n".encode()


@pytest.fixture
def limited(settings, session_factory) -> Iterator[TestClient]:
    small = settings.model_copy(
        update={
            "max_upload_bytes": 100_000,
            "uploads_per_minute": 3,
            "refused_uploads_per_minute": 2,
        }
    )
    with TestClient(create_app(small, session_factory=session_factory)) as client:
        yield client


def test_an_upload_declaring_more_than_the_limit_is_413_before_anything_else(limited, host):
    ready_competition(limited, host.headers)
    response = limited.post(
        f"{API}/competitions/churn/submissions",
        files={"file": ("sub.csv", b"x" * 300_000, "text/csv")},
        headers={"Authorization": "Bearer not-even-a-token"},
    )
    assert response.status_code == 413 and "100,000-byte upload limit" in response.json()["detail"]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}])
def test_an_upload_without_a_known_token_is_401(limited, host, headers):
    ready_competition(limited, host.headers)
    response = limited.post(
        f"{API}/competitions/churn/submissions",
        files={"file": ("sub.csv", PERFECT, "text/csv")},
        headers=headers,
    )
    assert response.status_code == 401 and response.json()["code"] == "unauthorized"
    assert response.headers["www-authenticate"] == "Bearer"


def test_a_chunked_upload_is_cut_at_the_limit(limited, host, alice):
    ready_competition(limited, host.headers)
    body = _multipart(iter([b"id,target\n"] + [b"a,0.5\n" * 10_000] * 10))
    response = limited.post(
        f"{API}/competitions/churn/submissions",
        content=body,
        headers={**alice.headers, "Content-Type": f"multipart/form-data; boundary={BOUNDARY}"},
    )
    assert response.status_code == 413 and "upload limit" in response.json()["detail"]


def test_the_answer_key_upload_is_guarded_too(limited, host, alice):
    ready_competition(limited, host.headers)
    response = limited.put(
        f"{API}/competitions/churn/answer-key",
        files={"file": ("key.csv", b"id,target\n", "text/csv")},
    )
    assert response.status_code == 401


def test_uploads_are_rate_limited_per_team_refused_ones_past_their_ceiling(
    limited, host, alice, bob
):
    """Issue 42: iterating on a format error does not end in 429s; files refused at intake are
    not counted until the team's refused ones pass their own ceiling (2 here), then they are."""
    ready_competition(limited, host.headers)
    assert submit(limited, alice.headers, PERFECT).status_code == 202
    assert submit(limited, alice.headers, b"no,header\n").status_code == 422
    assert submit(limited, alice.headers, b"").status_code == 422
    # Two refused within their ceiling: one accepted upload counted so far.
    assert submit(limited, alice.headers, PERFECT).status_code == 202
    # A third refused one is past the ceiling: it counts, the limit of 3 is reached.
    assert submit(limited, alice.headers, b"no,header\n").status_code == 422
    refused = submit(limited, alice.headers, PERFECT)
    assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
    assert 1 <= int(refused.headers["retry-after"]) <= 61
    # Another team has its own budget; the refused uploads cost alice no quota.
    assert submit(limited, bob.headers, PERFECT).status_code == 202
    quota = limited.get(f"{API}/competitions/churn/quota", headers=alice.headers).json()
    assert quota["used_today"] == 2
    history = limited.get(f"{API}/competitions/churn/submissions", headers=alice.headers).json()
    assert sorted(s["status"] for s in history) == [
        "failed",
        "failed",
        "failed",
        "scored",
        "scored",
    ]
    assert all(s["error"] for s in history if s["status"] == "failed")


def test_a_refused_files_history_entry_has_no_file_to_download(client, host, alice):
    ready_competition(client, host.headers)
    refused = submit(client, alice.headers, b"id,prediction\na,1\n")
    assert refused.status_code == 422
    submission_id = refused.json()["submission_id"]
    download = client.get(f"{API}/submissions/{submission_id}/file", headers=alice.headers)
    assert download.status_code == 404 and "not kept" in download.json()["detail"]


@pytest.mark.parametrize(
    "method, path",
    [
        ("get", "/submissions/{id}"),
        ("get", "/submissions/{id}/file"),
        ("post", "/submissions/{id}/select"),
        ("post", "/invitations/{id}/accept"),
        ("post", "/invitations/{id}/decline"),
    ],
)
@pytest.mark.parametrize("bad_id", ["99999999999999999999999", "0", "-3", "abc"])
def test_bad_path_ids_are_404_or_422_never_500(client, alice, method, path, bad_id):
    response = getattr(client, method)(API + path.format(id=bad_id), headers=alice.headers)
    assert response.status_code in (404, 422), response.text
