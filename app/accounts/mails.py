"""The texts of the account mails. Plain text: nothing a mail client could run, and user data
(names) only in the body, never in a header beyond the subject's fixed words."""

from app.mail.outbox import header_safe


def verify_address(*, name: str, link: str, taken_by: str | None) -> tuple[str, str]:
    body = [
        f"Hello {name},",
        "",
        "Follow this link within 24 hours to verify your e-mail address on Podium:",
        "",
        link,
        "",
    ]
    if taken_by is not None:
        body += [
            f"Note: this address already belongs to the account '{taken_by}'. If you meant to",
            "sign in to it, use the sign-in page (or 'Forgot your password?') instead; the link",
            "above will not move the address to another account.",
            "",
        ]
    body += ["If you did not ask for this, ignore this mail: nothing happens without the link."]
    return "Verify your e-mail address", "\n".join(body)


def reset_password(*, name: str, link: str) -> tuple[str, str]:
    body = [
        f"Hello {name},",
        "",
        "Someone (we hope you) asked to reset your Podium password. Follow this link within",
        "one hour to choose a new one; it works once:",
        "",
        link,
        "",
        "Setting a new password signs out every browser signed in to your account.",
        "If you did not ask for this, ignore this mail: your password stays as it is.",
    ]
    return "Reset your password", "\n".join(body)


def address_changed(*, name: str, new: str) -> tuple[str, str]:
    body = [
        f"Hello {name},",
        "",
        f"The e-mail address of your Podium account is now {header_safe(new)}.",
        "If you did not do this, reset your password and tell the site's admins.",
    ]
    return "Your e-mail address changed", "\n".join(body)
