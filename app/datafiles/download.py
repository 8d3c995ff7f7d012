"""A stored data file as a streamed HTTP response, with the headers download clients rely on."""

import mimetypes
from email.utils import format_datetime

from fastapi.responses import StreamingResponse

from app.config import Settings
from app.http.headers import content_disposition
from app.models import DataFile
from app.storage import iter_chunks, open_blob


def file_response(datafile: DataFile, settings: Settings) -> StreamingResponse:
    # Opened before the response starts, so a missing blob is a clean 404, not a broken stream.
    source = open_blob(datafile.storage_key, settings=settings)
    media_type = mimetypes.guess_type(datafile.name)[0] or "application/octet-stream"
    return StreamingResponse(
        iter_chunks(source),
        media_type=media_type,
        headers={
            "Content-Length": str(datafile.size_bytes),
            "Content-Disposition": content_disposition(datafile.name),
            "ETag": f'"{datafile.sha256}"',
            "Last-Modified": format_datetime(datafile.created_at, usegmt=True),
        },
    )
