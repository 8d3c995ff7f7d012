"""The jail's pipe readers keep their budgets whatever the other end writes."""

import os
import threading

from app.jail.process import BoundedReader, FileSink, HeadTailReader


def _pipe_with(data: bytes, pieces: int = 7):  # type: ignore[no-untyped-def]
    read, write = os.pipe()

    def writer() -> None:
        step = max(1, len(data) // pieces)
        for at in range(0, len(data), step):
            os.write(write, data[at : at + step])
        os.close(write)

    threading.Thread(target=writer, daemon=True).start()
    return os.fdopen(read, "rb")


def test_head_tail_keeps_the_first_and_last_bytes_of_a_flood():
    data = bytes(range(256)) * 4000  # 1,024,000 bytes
    reader = HeadTailReader(_pipe_with(data), head=100, tail=1000)
    reader.join(timeout=30)
    assert reader.total == len(data)
    assert reader.head() == data[:100]
    assert reader.tail() == data[-1000:]


def test_head_tail_of_a_short_stream_is_the_stream():
    reader = HeadTailReader(_pipe_with(b"hello world"), head=5, tail=100)
    reader.join(timeout=30)
    assert reader.head() + reader.tail() == b"hello world"


def test_a_bounded_reader_drops_everything_past_its_limit():
    reader = BoundedReader(_pipe_with(b"x" * 5000), 1000)
    reader.join(timeout=30)
    assert reader.overflowed and reader.data() == b""
    small = BoundedReader(_pipe_with(b'{"ok": 1}'), 1000)
    small.join(timeout=30)
    assert small.data() == b'{"ok": 1}'


def test_a_file_sink_stops_writing_at_its_limit(tmp_path):
    sink = FileSink(_pipe_with(b"y" * 5000), tmp_path / "out", 1000)
    sink.join(timeout=30)
    assert sink.overflowed
    assert (tmp_path / "out").stat().st_size <= 1000
    whole = FileSink(_pipe_with(b"id,y\n"), tmp_path / "whole", 1000)
    whole.join(timeout=30)
    assert not whole.overflowed and (tmp_path / "whole").read_bytes() == b"id,y\n"
