"""Accounts people own: sign-up, verified addresses, password resets, their data and leaving;
the site admin's users and invitations; the secrets sent in links."""
