"""A real SMTP server for the tests (aiosmtpd on loopback) and its deliveries as a mailbox."""

import email
import email.message
import email.policy
import time


class Inbox:
    """aiosmtpd's handler: every delivery kept, parsed as a mail client would."""

    def __init__(self) -> None:
        self.messages: list[email.message.EmailMessage] = []

    async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]  # noqa: N802
        self.messages.append(
            email.message_from_bytes(envelope.content, policy=email.policy.default)  # type: ignore[arg-type]
        )
        return "250 OK"

    def wait_for(self, to: str, count: int, timeout: float = 30.0) -> email.message.EmailMessage:
        """The ``count``-th mail to ``to``, once it has arrived."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            mine = [m for m in self.messages if m["To"] == to]
            if len(mine) >= count:
                return mine[count - 1]
            time.sleep(0.05)
        raise AssertionError(f"no mail #{count} to {to} within {timeout} s")
